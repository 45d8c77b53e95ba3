package redistest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RequireEnv names the variable that turns a missing redis-server into a
// test failure instead of a skip.
const RequireEnv = "RLCHECK_REQUIRE_REDIS"

// startTimeout bounds how long a server may take to answer its first PING.
const startTimeout = 10 * time.Second

// Server is one redis-server process on loopback.
type Server struct {
	// Addr is host:port, ready for redis.Options.Addr.
	Addr string
	Dir  string

	cmd      *exec.Cmd
	done     chan struct{}
	stopOnce sync.Once
	bin      string
	extra    []string
}

// Binary returns the path of redis-server, or skips (or fails, when
// RLCHECK_REQUIRE_REDIS=1) the test when it is missing.
func Binary(t testing.TB) string {
	t.Helper()
	return need(t, "redis-server")
}

// Available says whether redis-server is on the PATH, for a test that runs
// on a real server when there is one and on miniredis either way. When it
// is missing and RLCHECK_REQUIRE_REDIS=1, it fails t instead.
func Available(t testing.TB) bool {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err == nil {
		return true
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("redis-server not found on PATH; %s=1 makes this a failure", RequireEnv)
	}
	return false
}

func need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on PATH: this test needs a real Redis "+
		"(Debian: apt-get install redis-server redis-tools)", name)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s; %s=1 makes this a failure", msg, RequireEnv)
	}
	t.Skipf("SKIPPING: %s; set %s=1 to fail instead", msg, RequireEnv)
	return ""
}

// Start runs a fresh redis-server with no persistence in t.TempDir() and
// stops it when the test ends. extra are further config lines, each
// "name value..." as on the command line without the leading dashes.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		s, err := startAt(bin, dir, port, extra)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err // most likely another process took the port first
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

func startAt(bin, dir string, port int, extra []string) (*Server, error) {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--dir", dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)),
	}
	for _, line := range extra {
		f := strings.Fields(line)
		if len(f) > 0 {
			args = append(args, "--"+f[0])
			args = append(args, f[1:]...)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, cmd: cmd, done: make(chan struct{}), bin: bin, extra: extra}
	go func() { _ = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(startTimeout)
	for {
		reply, err := Command(s.Addr, time.Second, "PING")
		up := err == nil && reply == "PONG" || err != nil && strings.HasPrefix(err.Error(), "NOAUTH") // NOAUTH: up, with requirepass
		if up && ready(s.log(port)) {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("redis-server on port %d exited: %s", port, tail(filepath.Join(dir, fmt.Sprintf("redis-%d.log", port))))
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("redis-server on port %d did not answer PING within %v (last: %v)", port, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// log is the path of the server's log file when it listens on port.
func (s *Server) log(port int) string {
	return filepath.Join(s.Dir, fmt.Sprintf("redis-%d.log", port))
}

// ready reports whether the server whose log is at path says it accepts
// connections. A PING alone can be answered by another test's server that
// took the same free port first (this one then fails to bind and exits):
// only its own log tells that the answering server is this one.
func ready(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && bytes.Contains(data, []byte("Ready to accept connections"))
}

// Kill ends the server at once with SIGKILL, as a crash would, and waits
// for the process to go.
func (s *Server) Kill() {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.done
	})
}

// Restart kills the server (SIGKILL, as a crash) and starts it again on the
// same port and directory, where it loads dump.rdb if a SAVE left one: a
// restart without persistence, or from the last snapshot. It stops the
// new process when the test ends.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	_, port, err := net.SplitHostPort(s.Addr)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	p, _ := strconv.Atoi(port)
	n, err := startAt(s.bin, s.Dir, p, s.extra)
	if err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
	s.cmd, s.done, s.stopOnce = n.cmd, n.done, sync.Once{}
	t.Cleanup(s.Stop)
}

// Stop ends the server; it is safe to call more than once and after Kill.
func (s *Server) Stop() { s.Kill() }

// Pause freezes the server with SIGSTOP, as a stalled host would: it keeps
// its connections and its kernel still accepts new ones, but nothing is
// read or answered until Resume. A paused server is resumed when the test
// ends, so that it can be stopped.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("redistest: SIGSTOP %s: %v", s.Addr, err)
	}
	t.Cleanup(s.resume)
}

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("redistest: SIGCONT %s: %v", s.Addr, err)
	}
}

func (s *Server) resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Command sends one command to addr in the inline protocol and returns the
// first line of the reply without its type prefix, or an error for an error
// reply. It needs no client library, so the helpers stay independent.
func Command(addr string, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '-':
		return "", errors.New(line[1:])
	case '+', ':':
		return line[1:], nil
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return line, nil
}

// freePort asks the kernel for a loopback port that is free right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 800 {
		s = "…" + s[len(s)-800:]
	}
	return s
}

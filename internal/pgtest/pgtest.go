// Package pgtest starts a real PostgreSQL server for tests: a copy of an
// initdb template (made once, kept in the user's cache directory) in a
// fresh temporary directory, postgres on a free loopback port, without
// fsync, stopped and removed when the test ends. Running as root, the
// server runs as the postgres system user (or nobody), since postgres
// refuses to run as root.
//
// When the PostgreSQL binaries are not installed the tests that need them
// skip with a message, unless CI=true or RLCHECK_REQUIRE_POSTGRES=1 makes
// that a failure, so a missing install cannot pass for a green run.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// RequireEnv names the variable that turns missing binaries into a test
// failure instead of a skip.
const RequireEnv = "RLCHECK_REQUIRE_POSTGRES"

// startTimeout bounds how long the server may take to accept a connection
// on a loaded machine.
const startTimeout = 60 * time.Second

// Server is one postgres process on loopback.
type Server struct {
	// URL is a postgres:// connection string for database postgres.
	URL string
	Dir string
	cmd *exec.Cmd
}

// BinDir returns the directory holding initdb and postgres (from PATH, or
// Debian's /usr/lib/postgresql/N/bin, the newest), or skips the test.
func BinDir(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	msg := "pgtest: PostgreSQL (initdb, postgres) is not installed; apt-get install postgresql"
	if os.Getenv(RequireEnv) == "1" || os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start starts a server and returns it with a *sql.DB (driver pgx) open on
// it; both close when the test ends.
func Start(t testing.TB) (*Server, *sql.DB) {
	t.Helper()
	bin := BinDir(t)
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred, err := credential(dir)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	tmpl, err := template(bin, cred)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	data := filepath.Join(dir, "data")
	if out, err := exec.Command("cp", "-a", tmpl, data).CombinedOutput(); err != nil {
		t.Fatalf("pgtest: copying the initdb template: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	log, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-h", "127.0.0.1", "-k", dir, "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "work_mem=256MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgtest: postgres: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), Dir: dir, cmd: cmd}
	t.Cleanup(s.stop)
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, db
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			t.Fatalf("pgtest: postgres never answered on port %d: %v\n%s", port, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// template returns a data directory made by bin's initdb, kept in the
// user's cache directory (rlcheck-test-pg) and made once for every later
// run: each server starts on a copy of it, a fraction of a second where
// initdb takes seconds. It is keyed by bin and its initdb's modification
// time, so an upgraded PostgreSQL gets a template of its own.
func template(bin string, cred *syscall.Credential) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	st, err := os.Stat(filepath.Join(bin, "initdb"))
	if err != nil {
		return "", err
	}
	key := strings.Trim(strings.ReplaceAll(bin, string(filepath.Separator), "_"), "_") + "-" + strconv.FormatInt(st.ModTime().Unix(), 10)
	final := filepath.Join(cache, "rlcheck-test-pg", key)
	ready := func() bool { _, err := os.Stat(filepath.Join(final, "PG_VERSION")); return err == nil }
	if ready() {
		return final, nil
	}
	tmp, err := os.MkdirTemp("", "pgtest-initdb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if cred != nil {
		if err := os.Chown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			return "", err
		}
	}
	data := filepath.Join(tmp, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// Staged beside its place and renamed, so that test processes making
	// it at once each see a whole template or none.
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	staged := fmt.Sprintf("%s.%d", final, os.Getpid())
	if out, err := exec.Command("cp", "-a", data, staged).CombinedOutput(); err != nil {
		return "", fmt.Errorf("keeping the initdb template: %v\n%s", err, out)
	}
	if err := os.Rename(staged, final); err != nil {
		os.RemoveAll(staged)
		if !ready() {
			return "", err
		}
	}
	return final, nil
}

// stop asks for a fast shutdown and waits for it.
func (s *Server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// credential returns whom to run the server as: nil (ourselves) unless we
// are root, then the postgres user or nobody, who is given dir.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("running as root, and no postgres or nobody user to run the server as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

//go:build unix

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/syncbuf"
)

// waitFor polls a running command's output for re.
func waitFor(t *testing.T, b *syncbuf.Buffer, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no %v in %q", re, b.String())
	return nil
}

// TestServeReportIsChecks runs serve, sends it three requests past its
// 2/1m rule, and holds its report and exit status to check's on its log.
func TestServeReportIsChecks(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	log := filepath.Join(t.TempDir(), "requests.csv")
	var out, errOut syncbuf.Buffer
	code := make(chan int)
	go func() {
		code <- Execute([]string{"serve", "--rules", "2/1m", "--listen", "127.0.0.1:0", "--log", log, "--duration", "1s"}, nil, &out, &errOut)
	}()
	addr := waitFor(t, &errOut, regexp.MustCompile(`listening on (http://\S+) `))[1]
	var statuses []int
	for range 3 {
		resp, err := http.Get(addr + "/v1/x")
		require.NoError(t, err)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	assert.Equal(t, []int{200, 200, 429}, statuses)
	require.Equal(t, exitViolations, <-code, errOut.String())
	checked, errs, checkCode := run(t, "", "check", "--rules", "2/1m", "--duration-col", "duration_ns", "--duration-unit", "ns", log)
	assert.Equal(t, exitViolations, checkCode, errs)
	assert.Equal(t, checked, out.String())

	assert.Equal(t, exitUsage, Execute([]string{"serve", "--rules", "2/1m", "--on-violation", "ignore"}, nil, &out, &errOut))
}

// TestWatchCommand follows a file, prints its violation as it is read, and
// stops on SIGINT with the summary and exit status 1.
func TestWatchCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sends.txt")
	require.NoError(t, os.WriteFile(path, []byte("1.0\n1.5\n"), 0o644))
	var out, errOut syncbuf.Buffer
	code := make(chan int)
	go func() {
		code <- Execute([]string{"watch", "--rules", "2/1s", "--poll", "5ms", path}, nil, &out, &errOut)
	}()
	time.Sleep(50 * time.Millisecond)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("1.9\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	waitFor(t, &out, regexp.MustCompile(`sends.txt:3: 1.900000000 s breaks 2/1s: 3 sends in the window from 1.000000000 s\n`))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	require.Equal(t, exitViolations, <-code, errOut.String())
	assert.Contains(t, out.String(), "watched 1 file: 3 lines, 3 sends\n  2/1s         1 violation, at most 3 sends in a window\n")
}

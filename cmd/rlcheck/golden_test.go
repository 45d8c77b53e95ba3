package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/internal/golden"
	"github.com/stretchr/testify/assert"
)

var update = golden.Update

// run executes rlcheck with args and stdin, returning stdout, stderr and the
// exit code.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestErrorsNameFlags: the libraries name settings as Go fields
// (logcheck.Config.MaxBuffered); every message the command prints, errors
// and the skipped lines its report lists, names the flag instead.
func TestErrorsNameFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--rules", "2/1s", "--max-buffered", "-1", "-"}, "--max-buffered -1: want 1 or more"},
		{[]string{"check", "--rules", "2/1s", "--skip-invalid", "../../testdata/bad/units.txt"}, "were taken as ms; set --unit:"},
		{[]string{"check", "--rules", "2/1s", "--time-col", "9", "../../testdata/fleet/host1.csv"}, "--time-col 9: the first line has 3 columns"},
		{[]string{"check", "--rules", "2/1s", "--max-in-flight", "2", "../../testdata/fleet/host1.csv"}, "--max-in-flight needs when each call ended: --end-col/--end-field or --duration-col/--duration-field"},
		{[]string{"sql", "--rules", "2/1s", "--table", "t", "--time-col", "ts", "--counts-only", "--max-window"}, "--counts-only leaves out the largest count in one window that --max-window asks for"},
	} {
		stdout, stderr, _ := run(t, "1\n", c.args...)
		assert.Contains(t, stdout+stderr, c.want, "rlcheck %v", c.args)
		assert.NotRegexp(t, `(logcheck|sendlog|sqlcheck|report|merge)\.[A-Z]\w*\.[A-Z]`, stdout+stderr, "rlcheck %v", c.args)
	}
}

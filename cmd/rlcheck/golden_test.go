package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/internal/golden"
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

package main

import (
	"bytes"
	"strings"
	"testing"

	gold "github.com/rlcheck/rlcheck/internal/golden"
)

var update = gold.Update

// run executes rlcheck with args and stdin, returning stdout, stderr and the
// exit code.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/NAME, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	gold.Assert(t, name, got)
}

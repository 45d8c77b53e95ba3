package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endlessInput is standard input that never ends: a prefix, then one byte
// forever.
type endlessInput struct {
	prefix string
	b      byte
}

func (e *endlessInput) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.b
	}
	return len(p), nil
}

// TestCheckHostileInput runs whole commands on input built to mislead or
// exhaust: each is an error naming the file, with exit 2, or a verdict.
func TestCheckHostileInput(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	var zbuf bytes.Buffer
	zw := gzip.NewWriter(&zbuf)
	for range 1000 {
		io.WriteString(zw, "1700000000.5\n1700000000.6\n")
	}
	require.NoError(t, zw.Close())
	gz := zbuf.Bytes()
	whole := write("whole.txt.gz", gz)
	cutMid := write("mid.txt.gz", gz[:len(gz)/2])
	cutTrailer := write("trailer.txt.gz", gz[:len(gz)-3])
	mixed := write("mixed.txt", []byte(strings.Repeat("1700000000000\n", 3)+strings.Repeat("1700000000\n", 3)))
	bomPlain := write("bom.txt", []byte("\ufeff1.5\n2\n"))
	bomJSON := write("bom.jsonl", []byte("\ufeff{\"ts\":1.5}\n{\"ts\":2}\n"))
	equal := write("equal.txt", []byte(strings.Repeat("1\n", 50_000)))
	var lines strings.Builder
	for i := range 30_000 {
		fmt.Fprintf(&lines, "1.%05d\n", i) // 10 µs apart: all within 5 s
	}
	distinct := write("distinct.txt", []byte(lines.String()))

	tests := []struct {
		name   string
		stdin  io.Reader
		args   []string
		code   int
		stderr string // what stderr must contain
	}{
		{"whole gzip", nil, []string{"--rules", "5000/1s", whole}, 0, ""},
		{"gzip cut in the middle", nil, []string{"--rules", "5000/1s", cutMid}, 2, "rlcheck: " + cutMid + ": truncated gzip data: the stream is cut off after line "},
		{"gzip cut in its trailer", nil, []string{"--rules", "5000/1s", cutTrailer}, 2, "rlcheck: " + cutTrailer + ": truncated gzip data: the stream is cut off after line 2000"},
		{"mixed units", nil, []string{"--rules", "5/1s", mixed}, 2, mixed + ":4: a 10-digit integer looks like s, but earlier integers were taken as ms; set --unit"},
		{"mixed units, sorted", nil, []string{"--rules", "5/1s", "--sort", mixed}, 2, mixed + ":4: a 10-digit integer looks like s"},
		{"BOM before plain", nil, []string{"--rules", "5/1s", bomPlain}, 0, ""},
		{"BOM before JSON", nil, []string{"--rules", "5/1s", bomJSON}, 0, ""},
		{"endless line", &endlessInput{prefix: "1\n", b: '0'}, []string{"--rules", "5/1s", "-"}, 2, "rlcheck: <stdin>:2: line longer than 1048576 bytes"},
		{"endless JSON line", &endlessInput{prefix: `{"ts":"`, b: '0'}, []string{"--rules", "5/1s", "--input-format", "jsonl", "-"}, 2, "rlcheck: <stdin>:1: line longer than 1048576 bytes"},
		{"endless contract", nil, []string{"--contract", "/dev/zero", bomPlain}, 2, "rlcheck: /dev/zero: larger than 1048576 bytes (1 MiB)"},
		{"one instant, within the bound", nil, []string{"--rules", "5/1s", "--max-buffered", "1000", equal}, 1, ""},
		{"held sends past the bound", nil, []string{"--rules", "5/1s", "--max-buffered", "1000", distinct}, 2, distinct + ":30000: more than 1000 sends lie within --max-disorder 5s of the newest"},
		{"sorted past the bound", nil, []string{"--rules", "5/1s", "--max-buffered", "1000", "--sort", distinct}, 2, "--sort holds the whole input, and it has more than 1000 sends to hold (--max-buffered 1000)"},
		{"a short horizon holds less", nil, []string{"--rules", "50000/1s", "--max-buffered", "1000", "--max-disorder", "0s", distinct}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.stdin
			if in == nil {
				in = strings.NewReader("")
			}
			var out, errOut bytes.Buffer
			code := Execute(append([]string{"check"}, tt.args...), in, &out, &errOut)
			assert.Equal(t, tt.code, code, "stderr: %s", errOut.String())
			if tt.stderr == "" {
				assert.Empty(t, errOut.String())
			} else {
				assert.Contains(t, errOut.String(), tt.stderr)
				assert.NotContains(t, errOut.String(), "panic")
			}
		})
	}
}

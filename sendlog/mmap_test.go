package sendlog

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readFile reads a whole log from an open file, as readPath reads a
// string, and returns how many chunks were cut from its mapping.
func readFile(t *testing.T, f *os.File, name string, opt Options) (out []string, mapped int) {
	t.Helper()
	r := NewReader(name, f, opt)
	defer r.Close()
	deferred := false
	for {
		rec, err := r.Next()
		if r.pipe != nil && !deferred {
			defer func(p *pipeline) { r.Close(); mapped = p.mapped }(r.pipe)
			deferred = true
		}
		if err == io.EOF {
			return out, 0
		}
		if err != nil {
			return append(out, err.Error()), 0
		}
		out = append(out, fmt.Sprintf("%d %d %d %q", rec.At, rec.End, rec.Line, rec.Key))
	}
}

// mappedLog is a CSV log of many chunks: machine-written lines, lines the
// fast path leaves to the general one, a line longer than a chunk buffer
// (after which the file is read, not mapped), and a bad line at the end.
func mappedLog(lines int, long bool) string {
	var b strings.Builder
	b.WriteString("\ufeffts,key\n")
	for i := range lines {
		fmt.Fprintf(&b, "%d,k%d\n", 1767225600000000000+int64(i)*150_000_000, i%100)
		switch {
		case i%1000 == 7:
			fmt.Fprintf(&b, "%d.5,\"q\"\r\n", 1767225600+int64(i)*150/1000)
		case long && i == lines/2:
			fmt.Fprintf(&b, "%d,%s\n", 1767225600000000000+int64(i)*150_000_000, strings.Repeat("x", 300<<10))
		}
	}
	b.WriteString("17672256x0000000000,k\n")
	return b.String()
}

// TestMappedFile holds a regular file, cut into chunks from its mapping,
// to the same log read from a plain reader: records, line numbers, keys
// and the error, with and without --skip-invalid and a key column, from
// the file's start and from an offset it was opened at.
func TestMappedFile(t *testing.T) {
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 1
	dir := t.TempDir()
	for _, long := range []bool{false, true} {
		text := mappedLog(60_000, long)
		name := filepath.Join(dir, fmt.Sprintf("long-%v.csv", long))
		require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
		// From the start, and from the second line, with no header.
		second := strings.IndexByte(text[strings.IndexByte(text, '\n')+1:], '\n') + strings.IndexByte(text, '\n') + 2
		for _, opt := range []Options{{}, {SkipInvalid: true}, {KeyCol: "2", Workers: 1}} {
			for _, skip := range []int{0, second} {
				f, err := os.Open(name)
				require.NoError(t, err)
				_, err = f.Seek(int64(skip), io.SeekStart)
				require.NoError(t, err)
				got, mapped := readFile(t, f, name, opt)
				f.Close()
				want := readPath(name, text[skip:], opt, true)
				require.Greater(t, len(want), 50_000, "long line %v, %+v, from byte %d: %q", long, opt, skip, want[len(want)-1])
				require.Equal(t, want, got, "long line %v, %+v, from byte %d", long, opt, skip)
				require.GreaterOrEqual(t, mapped, 2, "chunks cut from the mapping")
			}
		}
	}
}

// TestMappedFileShrinks cuts a mapped file short while it is read: the
// pages past its new end fault, and the read ends in an error naming the
// cause, not a crash.
func TestMappedFileShrinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("files are mapped on Linux only")
	}
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 1
	name := filepath.Join(t.TempDir(), "shrinks.csv")
	require.NoError(t, os.WriteFile(name, []byte(mappedLog(400_000, false)), 0o600))
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	r := NewReader(name, f, Options{Workers: 1})
	defer r.Close()
	_, err = r.NextBatch()
	require.NoError(t, err)
	require.NotNil(t, r.pipe.m, "the file is mapped")
	require.NoError(t, os.Truncate(name, 0))
	for err == nil {
		_, err = r.NextBatch()
	}
	require.ErrorContains(t, err, "read error after line ")
	require.ErrorContains(t, err, "the file shrank or failed while it was read")
}

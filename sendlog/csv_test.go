package sendlog

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// csvKeys reads a CSV log with its key in column 2, on the fast path and
// on the general path alike, and returns the keys and line numbers, or
// the error; it fails the test when the two paths disagree.
func csvKeys(t *testing.T, text string, opt Options) []string {
	t.Helper()
	opt.Format, opt.KeyCol = FormatCSV, "2"
	fast, slow := readPath("q.csv", text, opt, true), readPath("q.csv", text, opt, false)
	require.Equal(t, slow, fast, "%q: fast path against the general path", text)
	var out []string
	for _, s := range fast {
		if f := strings.SplitN(s, " ", 4); len(f) == 4 && !strings.HasPrefix(s, "q.csv:") {
			s = f[2] + " " + f[3] // line and key
		}
		out = append(out, s)
	}
	return out
}

// TestCSVQuotingRFC4180 pins down that "a""b" was read as a""b, and that
// "x"y and "x"z were both read as key x, merging two keys: fields are
// read by RFC 4180, and malformed quoting is refused naming its line.
func TestCSVQuotingRFC4180(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"doubled quote", "ts,key\n1,\"a\"\"b\"\n2,a\n", []string{`2 "a\"b"`, `3 "a"`}},
		{"comma inside", "ts,key\n1,\"a,b\"\n", []string{`2 "a,b"`}},
		{"line break inside", "ts,key\n1,\"a\nb\"\n2,c\n3,\"d\r\ne\"\r\n4,f\n", []string{`2 "a\nb"`, `4 "c"`, `5 "d\ne"`, `7 "f"`}},
		{"empty quoted", "ts,key\n1,\"\"\n", []string{`2 ""`}},
		{"quoted time", "ts,key\n\"1\",k\n", []string{`2 "k"`}},
		{"text after the quote", "ts,key\n1,\"x\"y\n2,\"x\"z\n", []string{`q.csv:2: bad CSV quoting in column 2: text after the closing quote`}},
		{"bare quote", "ts,key\n1,k\n2,a\"b\n", []string{`2 "k"`, `q.csv:3: bad CSV quoting in column 2: a quote inside an unquoted field`}},
		{"bare quote in a third column", "ts,key,x\n1,k,a\"b\n", []string{`q.csv:2: bad CSV quoting in column 3`}},
		{"not closed", "ts,key\n1,k\n2,\"abc\n3,d\n", []string{`2 "k"`, `q.csv:3: bad CSV quoting in column 2: a quoted field is not closed`}},
		{"space before the quote", "ts,key\n1, \"k\"\n", []string{`q.csv:2: bad CSV quoting in column 2: a quote inside an unquoted field`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := csvKeys(t, tt.text, Options{Unit: UnitSeconds})
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], w), "record %d: got %q, want %q", i, got[i], w)
			}
		})
	}
}

// TestCSVSkipInvalidQuoting skips a line with bad quoting and goes on at
// the next line, which a bare quote would otherwise have joined to it.
func TestCSVSkipInvalidQuoting(t *testing.T) {
	got := csvKeys(t, "ts,key\n1,a\"b\n2,c\n3,d\"e\n4,f\n", Options{Unit: UnitSeconds, SkipInvalid: true})
	assert.Equal(t, []string{`3 "c"`, `5 "f"`}, got)
}

// TestLinesCSVRecordsOverLines holds Lines (watch) to Reader on records
// whose quotes hold line breaks.
func TestLinesCSVRecordsOverLines(t *testing.T) {
	for _, data := range []string{
		"ts,key\n1,\"a\nb\"\n2,\"c\"\"d\"\n3,e\n",
		"ts,key\n1,\"a\n\nb\"\n2,x\n",
		"ts,key\n1,\"a\n2,b\n",
	} {
		assertLinesAgree(t, "a.csv", data, Options{KeyCol: "key"})
	}
	l := NewLines("a.csv", Options{KeyCol: "key"})
	var got []Record
	for _, line := range strings.Split("ts,key\n1,\"a\nb\"\n2,c", "\n") {
		recs, err := l.Parse([]byte(line))
		require.NoError(t, err)
		for _, r := range recs {
			r.Key = append([]byte(nil), r.Key...)
			got = append(got, r)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, "a\nb", string(got[0].Key))
	assert.Equal(t, []int64{2, 4}, []int64{got[0].Line, got[1].Line})
}

// quotedLog is a CSV log of many chunks whose keys need quoting: commas,
// doubled quotes, line breaks (some \r\n), next to plain keys, so that
// chunk ends fall inside quoted fields.
func quotedLog(n int, seed uint64) (string, [][]string) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	b.WriteString("ts,key\n")
	want := [][]string{{"ts", "key"}}
	pieces := []string{"a", "b,c", `q"q`, "l\nm", "x\r\ny", "", "\"\"", "long " + strings.Repeat("z", 300)}
	for i := range n {
		ts := fmt.Sprint(1767225600000000000 + int64(i)*1000)
		key := fmt.Sprintf("k%d", i%7)
		if rng.IntN(3) == 0 {
			key = pieces[rng.IntN(len(pieces))] + key
		}
		b.WriteString(ts + ",")
		b.Write(AppendCSVField(nil, key))
		b.WriteString("\n")
		want = append(want, []string{ts, strings.ReplaceAll(key, "\r\n", "\n")})
	}
	return b.String(), want
}

// TestCSVChunkEnds reads a log of many chunks with quoted keys, from a
// plain reader and from a mapped file, and holds the keys and line numbers
// to encoding/csv: no chunk may end inside a quoted field.
func TestCSVChunkEnds(t *testing.T) {
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 1
	text, want := quotedLog(40_000, 3)
	oracle, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, want, oracle, "AppendCSVField against encoding/csv")
	// Line numbers: each record starts one line after the line breaks
	// of the record before it.
	var lines []string
	line := 2
	for _, rec := range want[1:] {
		lines = append(lines, fmt.Sprintf("%d %q", line, rec[1]))
		line += 1 + strings.Count(rec[1], "\n") + strings.Count(rec[1], "\r")
	}
	got := csvKeys(t, text, Options{})
	require.Equal(t, lines, got)
	name := filepath.Join(t.TempDir(), "q.csv")
	require.NoError(t, os.WriteFile(name, []byte(text), 0o600))
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	fromFile, mapped := readFile(t, f, "q.csv", Options{KeyCol: "2"})
	require.Equal(t, readPath("q.csv", text, Options{KeyCol: "2"}, true), fromFile)
	require.GreaterOrEqual(t, mapped, 2, "chunks cut from the mapping")
}

// FuzzCSVOracle holds the reader to encoding/csv: a log whose lines start
// with an epoch and go on with fuzzed text reads as encoding/csv reads it
// (the same keys, the second column, in order), or both refuse it.
func FuzzCSVOracle(f *testing.F) {
	for _, s := range []string{"a", "\"a\"\"b\"", "\"x\"y\x01\"x\"z", "\"a\nb\"", "a\"b", "\"a,b\",c", "\"open", "\"\"", "\"a\r\nb\"\r", "k\x01\x01 k", "a\n1700000002,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var b strings.Builder
		for i, piece := range strings.Split(raw, "\x01") {
			fmt.Fprintf(&b, "%d,%s\n", 1700000000+i, piece)
		}
		text := b.String()
		opt := Options{Format: FormatCSV, TimeCol: "1", KeyCol: "2", Unit: UnitSeconds}
		got := readPath("f.csv", text, opt, true)
		require.Equal(t, readPath("f.csv", text, opt, false), got, "%q: fast path against the general path", text)
		r := csv.NewReader(strings.NewReader(text))
		r.FieldsPerRecord = -1
		rawLines := strings.Split(text, "\n")
		ok := !strings.ContainsRune(text, 0) // binary data, which the reader refuses
		var want []string
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				ok = false
				break
			}
			if line, _ := r.FieldPos(0); len(rec) == 1 && strings.TrimSpace(rawLines[line-1]) == "" {
				continue // a blank line, which the reader skips
			}
			var n int64
			if _, err := fmt.Sscan(strings.TrimSpace(rec[0]), &n); err != nil || len(rec) < 2 || fmt.Sprint(n) != strings.TrimSpace(rec[0]) || len(fmt.Sprint(n)) > 12 {
				return // a time the reader may or may not take: no verdict
			}
			want = append(want, rec[1])
		}
		if !ok {
			require.NotEmpty(t, got)
			require.Contains(t, got[len(got)-1], "f.csv:", "%q: encoding/csv refuses it, the reader reads %q", text, got)
			return
		}
		var keys []string
		for _, s := range got {
			require.False(t, strings.HasPrefix(s, "f.csv:"), "%q: the reader fails (%s) where encoding/csv reads %q", text, s, want)
			key, err := strconv.Unquote(strings.SplitN(s, " ", 4)[3])
			require.NoError(t, err)
			keys = append(keys, key)
		}
		require.Equal(t, want, keys, "%q", text)
	})
}

// TestAppendCSVField round-trips fields through encoding/csv.
func TestAppendCSVField(t *testing.T) {
	for _, s := range []string{"", "a", "a,b", `a"b`, "a\nb", " a", "a ", `"`, "\r"} {
		line := append(AppendCSVField(nil, s), ',')
		rec, err := csv.NewReader(bytes.NewReader(append(line, 'x', '\n'))).Read()
		if assert.NoError(t, err, "%q", line) {
			assert.Equal(t, []string{s, "x"}, rec, "%q", line)
		}
	}
}

package sendlog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readerRecords returns what Reader makes of data: its records (keys copied) or
// its first error.
func readerRecords(name string, data []byte, opt Options) ([]Record, error) {
	r := NewReader(name, bytes.NewReader(data), opt)
	defer r.Close()
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		rec.Key = append([]byte(nil), rec.Key...)
		out = append(out, rec)
	}
}

// parseLines returns what Lines makes of data fed a line at a time.
func parseLines(name string, data []byte, opt Options) ([]Record, error) {
	l := NewLines(name, opt)
	var out []Record
	lines := bytes.SplitAfter(data, []byte("\n"))
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		recs, err := l.Parse(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			return out, err
		}
		for _, rec := range recs {
			rec.Key = append([]byte(nil), rec.Key...)
			out = append(out, rec)
		}
	}
	recs, err := l.Flush()
	if err != nil {
		return out, err
	}
	out = append(out, recs...)
	if len(out) == 0 {
		return nil, errors.New("no sends")
	}
	return out, nil
}

// assertLinesAgree holds Lines to Reader: the same records, or both fail
// on the same line.
func assertLinesAgree(t *testing.T, name, data string, opt Options) {
	t.Helper()
	want, werr := readerRecords(name, []byte(data), opt)
	got, gerr := parseLines(name, []byte(data), opt)
	if werr != nil {
		require.Error(t, gerr, "Reader fails with %v", werr)
		var we, ge *InputError
		if errors.As(werr, &we) && we.Line > 0 && errors.As(gerr, &ge) {
			assert.Equal(t, we.Line, ge.Line, "%v / %v", werr, gerr)
		}
		return
	}
	require.NoError(t, gerr)
	assert.Equal(t, want, got)
}

var linesCases = []struct {
	name, data string
	opt        Options
}{
	{"0", "#000\n0,0", Options{KeyCol: "key"}},
	{"a.txt", "1.5\n2.25\n# comment\n\n3\n", Options{}},
	{"a.txt", "1732945800123456789\n1732945800123456790\n", Options{}},
	{"a.txt", "\ufeff1700000000\n1700000001\r\n", Options{}},
	{"a.csv", "ts,key,took\n1700000000000,k1,5ms\n1700000000001,\"k,2\",1.5\n", Options{KeyCol: "key", DurationCol: "took"}},
	{"a.csv", "1700000000,x\n1700000001,y\n", Options{}},
	{"a.csv", "ts,key\n1,a\nbad,b\n", Options{KeyCol: "key"}},
	{"a.jsonl", `{"ts":1.5,"k":"a"}` + "\n" + `{"ts":2,"k":"b"}` + "\n", Options{KeyField: "k"}},
	{"a.jsonl", `{"time":"2024-11-30T05:50:00.5Z"}` + "\n", Options{}},
	{"x", "1700000000\n1700000000123\n", Options{}},
	{"x", "1\n\x00\n", Options{}},
	{"a.log", `203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET /a HTTP/1.1" 200 512 "-" "curl/8.5.0" 1732945800.123 0.045` + "\n", Options{Format: FormatNginx}},
}

func TestLinesAgreeWithReader(t *testing.T) {
	for _, c := range linesCases {
		t.Run(c.name+"/"+strings.ReplaceAll(c.data[:min(len(c.data), 20)], "\n", "|"), func(t *testing.T) {
			assertLinesAgree(t, c.name, c.data, c.opt)
		})
	}
}

func TestLinesRefusesGzip(t *testing.T) {
	_, err := NewLines("a.gz", Options{}).Parse([]byte{0x1f, 0x8b, 8, 0})
	assert.ErrorContains(t, err, "a.gz: gzip data cannot be followed")
}

func FuzzLines(f *testing.F) {
	for _, c := range linesCases {
		f.Add(c.name, c.data, c.opt.KeyCol != "" || c.opt.KeyField != "")
	}
	f.Fuzz(func(t *testing.T, name, data string, keyed bool) {
		opt := Options{}
		if keyed {
			opt.KeyCol, opt.KeyField = "key", "k"
		}
		if len(data) > 1<<16 {
			return
		}
		if keyed {
			// A key column that is also the time column is read apart by
			// Reader's fast path (no key) and its general path (the time
			// text as key); Lines takes the general path.
			l := NewLines(name, opt)
			for _, line := range strings.Split(data, "\n") {
				l.Parse([]byte(line))
			}
			l.Flush()
			if lp := l.r.lp; lp.format == FormatCSV && lp.cols[slotKey] == lp.cols[slotTime] {
				return
			}
		}
		assertLinesAgree(t, name, data, opt)
	})
}

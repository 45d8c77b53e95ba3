package sendlog

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readAll returns every record of a log, or the first error.
func readAll(name, text string, opt Options) ([]Record, *Reader, error) {
	r := NewReader(name, strings.NewReader(text), opt)
	var out []Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out = append(out, rec)
	}
}

func times(recs []Record) []int64 {
	var ts []int64
	for _, r := range recs {
		ts = append(ts, r.At)
	}
	return ts
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name, file, text string
		opt              Options
		want             []int64
		lines            []int64
	}{
		{"plain", "a.txt", "0.5\n\n# note\n1.25\r\n2\n", Options{}, []int64{5e8, 125e7, 2e9}, []int64{1, 4, 5}},
		{"csv header ts", "a.csv", "key,ts\nk1,1.5\nk2,2.5\n", Options{}, []int64{15e8, 25e8}, []int64{2, 3}},
		{"csv default first column", "a.csv", "when,key\n1,a\n2,b\n", Options{}, []int64{1e9, 2e9}, []int64{2, 3}},
		{"csv by name", "x", "a,Sent_At\n9,1\n9,2\n", Options{Format: FormatCSV, TimeCol: "sent_at"}, []int64{1e9, 2e9}, []int64{2, 3}},
		{"csv by index", "a.csv", "a,b\nx,1\ny,3\n", Options{TimeCol: "2"}, []int64{1e9, 3e9}, []int64{2, 3}},
		{"csv no header", "a.csv", "1,a\n2,b\n", Options{}, []int64{1e9, 2e9}, []int64{1, 2}},
		{"csv quoted", "a.csv", "ts,msg\n\"1\",\"a, b\"\n2,\"x\"\"y\"\n", Options{}, []int64{1e9, 2e9}, []int64{2, 3}},
		{"csv sniffed", "log", "ts,key\n1732945844123456789,a\n", Options{}, []int64{1732945844123456789}, []int64{2}},
		{"jsonl", "a.jsonl", `{"ts": 1.5}` + "\n" + `{"ts": "2024-11-30T04:30:00Z"}` + "\n", Options{}, []int64{15e8, 1732941000000000000}, []int64{1, 2}},
		{"jsonl nested field", "x", `{"req":{"at":1700000000000}}` + "\n", Options{TimeField: "req.at"}, []int64{1700000000000000000}, []int64{1}},
		{"jsonl time", "a.ndjson", `{"time": 3}` + "\n", Options{}, []int64{3e9}, []int64{1}},
		{"jsonl big int exact", "a.jsonl", `{"ts":1732945844123456789}` + "\n", Options{}, []int64{1732945844123456789}, []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, _, err := readAll(tt.file, tt.text, tt.opt)
			require.NoError(t, err)
			assert.Equal(t, tt.want, times(recs))
			var lines []int64
			for _, r := range recs {
				lines = append(lines, r.Line)
			}
			assert.Equal(t, tt.lines, lines)
		})
	}
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("9", 10<<20)
	tests := []struct {
		name, file, text string
		opt              Options
		want             string // the whole error must contain this
	}{
		{"empty", "e.txt", "", Options{}, "e.txt: no sends: the input is empty"},
		{"blank only", "e.txt", "\n\n", Options{}, "only blank or comment lines"},
		{"header only", "h.csv", "ts,key\n", Options{}, "h.csv: no sends: only a header line"},
		{"negative", "n.txt", "1\n-2\n", Options{}, `n.txt:2: negative timestamp: "-2"`},
		{"missing csv", "m.csv", "ts,key\n1,a\n,b\n", Options{}, `m.csv:3: missing timestamp: ",b"`},
		{"missing json", "m.jsonl", `{"ts":1}` + "\n" + `{"x":1}` + "\n", Options{}, `m.jsonl:2: no field "ts"`},
		{"null json", "m.jsonl", `{"ts":null}` + "\n", Options{}, `m.jsonl:1: missing timestamp`},
		{"bad json", "b.jsonl", `{"ts":1` + "\n", Options{}, "b.jsonl:1: bad JSON"},
		{"garbage", "g.txt", "1.5\nhello\n", Options{}, `g.txt:2: not a timestamp (want decimal seconds, an integer epoch or RFC 3339): "hello"`},
		{"binary", "b.bin", "\x00\x01\x02\xff\n", Options{}, "b.bin:1: binary data"},
		{"ten MB line", "l.txt", "1\n" + long + "\n3\n", Options{}, "l.txt:2: line longer than 1048576 bytes"},
		{"no such column", "c.csv", "a,b\n1,2\n", Options{TimeCol: "ts"}, `c.csv:1: no column named "ts" in the header`},
		{"column out of range", "c.csv", "a,b\n1,2\n", Options{TimeCol: "3"}, "sendlog.Options.TimeCol 3: the first line has 2 columns"},
		{"short row", "c.csv", "a,ts\n1,2\n5\n", Options{}, `c.csv:3: no column 2 (the time): "5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(tt.file, tt.text, tt.opt)
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			assert.ErrorContains(t, err, tt.want)
			assert.LessOrEqual(t, len(err.Error()), 400, "error message length")
		})
	}
}

func TestSkipInvalid(t *testing.T) {
	long := strings.Repeat("7", 3*MaxLine)
	recs, r, err := readAll("s.txt", "1\nx\n2\n-3\n\x00\n"+long+"\n4\n", Options{SkipInvalid: true})
	require.NoError(t, err)
	assert.Equal(t, []int64{1e9, 2e9, 4e9}, times(recs))
	n, first := r.Skipped()
	assert.Equal(t, int64(4), n)
	var lines []int64
	for _, e := range first {
		lines = append(lines, e.Line)
	}
	assert.Equal(t, []int64{2, 4, 5, 6}, lines)
	_, _, err = readAll("s.txt", "x\ny\n", Options{SkipInvalid: true})
	assert.ErrorContains(t, err, "no valid sends (2 invalid lines skipped")
}

func TestGzip(t *testing.T) {
	data := gzipped(t, "ts,key\n1,a\n2,b\n")
	recs, r, err := readAll("a.csv.gz", string(data), Options{})
	require.NoError(t, err)
	assert.Equal(t, []int64{1e9, 2e9}, times(recs))
	assert.Equal(t, FormatCSV, r.Format())
}

// TestKeyDict: each send's key comes back from the batch's distinct keys,
// with keys that share their first eight bytes, repeat, differ only in
// length, and outnumber the table's first size.
func TestKeyDict(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var pool [][]byte
	for i := range 700 {
		switch i % 4 {
		case 0:
			pool = append(pool, []byte("k"+strconv.Itoa(i)))
		case 1:
			pool = append(pool, []byte("tenant-0000-"+strconv.Itoa(i)))
		case 2:
			pool = append(pool, bytes.Repeat([]byte("a"), i%17))
		default:
			pool = append(pool, []byte{0, byte(i), byte(i >> 8)})
		}
	}
	var d keyDict
	for round := range 3 {
		var b Batch
		d.reset()
		var want [][]byte
		for range 5000 {
			k := pool[rng.IntN(len(pool)-round*200)]
			want = append(want, k)
			b.keyIdx = append(b.keyIdx, d.index(&b, k))
		}
		seen := map[string]bool{}
		for i, k := range want {
			require.Equal(t, string(k), string(b.Key(i)), "round %d send %d", round, i)
			seen[string(k)] = true
		}
		assert.Equal(t, len(seen), b.NumKeys(), "round %d: one entry per distinct key", round)
	}
}

package sendlog

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
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
			if err != nil {
				t.Fatal(err)
			}
			got := times(recs)
			if len(got) != len(tt.want) {
				t.Fatalf("times = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] || recs[i].Line != tt.lines[i] {
					t.Errorf("record %d = %+v, want at %d line %d", i, recs[i], tt.want[i], tt.lines[i])
				}
			}
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
		{"column out of range", "c.csv", "a,b\n1,2\n", Options{TimeCol: "3"}, "--time-col 3: the first line has 2 columns"},
		{"short row", "c.csv", "a,ts\n1,2\n5\n", Options{}, `c.csv:3: no column 2 (the time): "5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readAll(tt.file, tt.text, tt.opt)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InputError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q\nwant it to contain %q", err, tt.want)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error message is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestSkipInvalid(t *testing.T) {
	recs, r, err := readAll("s.txt", "1\nx\n2\n-3\n\x00\n4\n", Options{SkipInvalid: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := times(recs); len(got) != 3 || got[2] != 4e9 {
		t.Errorf("times = %v", got)
	}
	n, first := r.Skipped()
	if n != 3 || first[0].Line != 2 || first[1].Line != 4 || first[2].Line != 5 {
		t.Errorf("skipped %d: %v", n, first)
	}
	if _, _, err := readAll("s.txt", "x\ny\n", Options{SkipInvalid: true}); err == nil || !strings.Contains(err.Error(), "no valid sends (2 invalid lines skipped") {
		t.Errorf("all lines invalid: %v", err)
	}
}

func TestGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, "ts,key\n1,a\n2,b\n")
	zw.Close()
	r := NewReader("a.csv.gz", &buf, Options{})
	var got []int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rec.At)
	}
	if len(got) != 2 || got[1] != 2e9 || r.Format() != FormatCSV {
		t.Errorf("got %v as %v", got, r.Format())
	}
}

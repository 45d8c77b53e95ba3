package sendlog

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gzipped compresses text as one gzip member.
func gzipped(t testing.TB, text string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := io.WriteString(zw, text)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// readBytes reads a whole log from data and returns its times, or the first
// error.
func readBytes(name string, data []byte, opt Options) ([]int64, error) {
	r := NewReader(name, bytes.NewReader(data), opt)
	defer r.Close()
	var ts []int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ts, nil
		}
		if err != nil {
			return ts, err
		}
		ts = append(ts, rec.At)
	}
}

// requireInputError demands an *InputError that names the file.
func requireInputError(t *testing.T, err error, name string, msgAndArgs ...any) *InputError {
	t.Helper()
	var ie *InputError
	require.ErrorAs(t, err, &ie, msgAndArgs...)
	require.Equal(t, name, ie.File, msgAndArgs...)
	return ie
}

// TestTruncatedGzip cuts gzipped logs at every byte inside the stream: a
// cut member is an input error naming the file, never a shorter log read
// as valid (the gzip reader reports the cut as io.ErrUnexpectedEOF, which
// the chunk reader took for a normal end).
func TestTruncatedGzip(t *testing.T) {
	var plain, csv, jsonl strings.Builder
	csv.WriteString("ts,key\n")
	for i := range 60 {
		fmt.Fprintf(&plain, "%d.%03d\n", 1700000000+i/10, i%10*100)
		fmt.Fprintf(&csv, "%d,k%d\n", 1700000000000+int64(i)*100, i%3)
		fmt.Fprintf(&jsonl, `{"ts":%d}`+"\n", 1700000000000+int64(i)*100)
	}
	first := gzipped(t, plain.String())
	twoMembers := append(first, gzipped(t, plain.String())...)
	tests := []struct {
		name  string
		data  []byte
		sends int
		step  int // every step-th cut
	}{
		{"plain.txt.gz", gzipped(t, plain.String()), 60, 1},
		{"log.csv.gz", gzipped(t, csv.String()), 60, 1},
		{"log.jsonl.gz", gzipped(t, jsonl.String()), 60, 1},
		{"two-members.txt.gz", twoMembers, 120, 1},
		// Longer than a chunk, so the cut lands after whole chunks too.
		{"big.csv.gz", gzipped(t, strings.Repeat(csv.String()[7:], 2000)), 120000, 997},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := readBytes(tt.name, tt.data, Options{Workers: 2})
			require.NoError(t, err)
			require.Len(t, ts, tt.sends)
			for cut := 1; cut < len(tt.data); cut += tt.step {
				if tt.sends == 120 && cut == len(first) {
					continue // the end of the first member: a whole gzip file
				}
				_, err := readBytes(tt.name, tt.data[:cut], Options{Workers: 2})
				requireInputError(t, err, tt.name, "cut at %d of %d bytes", cut, len(tt.data))
			}
		})
	}
	t.Run("message", func(t *testing.T) {
		data := tests[0].data
		_, err := readBytes("a.gz", data[:len(data)-4], Options{})
		assert.EqualError(t, err, "a.gz: truncated gzip data: the stream is cut off after line 60")
		_, err = readBytes("a.gz", data[:5], Options{})
		assert.EqualError(t, err, "a.gz: truncated gzip data: the stream ends inside its header")
	})
}

// TestMixedUnits: an integer whose digit count points to another unit than
// the one detected is an error whichever comes first, also when the first
// integers lie beyond the lines that fix the unit up front and the parsing
// goroutines each detect their own.
func TestMixedUnits(t *testing.T) {
	lines := func(n int, s string) string { return strings.Repeat(s+"\n", n) }
	// Decimals fill the lines read up front, so integers are detected chunk
	// by chunk. Lines of 16 bytes fill chunks exactly: the first chunk holds
	// decimals, the second ms integers and the third seconds, from line
	// 33,281 on, so only the chunks' agreement can catch them.
	perChunk := (chunkSize + 4096) / 16
	late := lines(perChunk, fmt.Sprintf("%15s", "1.5")) + lines(perChunk, fmt.Sprintf("%15s", "1700000000000")) + lines(perChunk, fmt.Sprintf("%15s", "1700000000"))
	tests := []struct {
		name, file, text string
		want             string // "" when the log reads
	}{
		{"ms then s", "a.txt", lines(3, "1700000000000") + lines(3, "1700000000"), `a.txt:4: a 10-digit integer looks like s, but earlier integers were taken as ms; set sendlog.Options.Unit: "1700000000"`},
		{"s then ms", "a.txt", lines(3, "1700000000") + lines(3, "1700000000000"), `a.txt:4: a 13-digit integer looks like ms, but earlier integers were taken as s; set sendlog.Options.Unit: "1700000000000"`},
		{"ns then us", "a.txt", "1700000000000000000\n1700000000000000\n", `a.txt:2: a 16-digit integer looks like us, but earlier integers were taken as ns`},
		{"ms then a small integer", "a.txt", "1700000000000\n7\n", `a.txt:2: a 1-digit integer looks like s, but earlier integers were taken as ms`},
		{"csv", "a.csv", "ts,k\n1700000000000,a\n1700000000,a\n", `a.csv:3: a 10-digit integer looks like s, but earlier integers were taken as ms; set sendlog.Options.Unit: "1700000000,a"`},
		{"jsonl", "a.jsonl", `{"ts":1700000000000}` + "\n" + `{"ts":1700000000}` + "\n", `a.jsonl:2: a 10-digit integer looks like s`},
		{"detected chunk by chunk", "late.txt", late, `late.txt:33281: a 10-digit integer looks like s, but earlier integers were taken as ms; set sendlog.Options.Unit: "     1700000000"`},
		{"one unit", "a.txt", lines(3, "1700000000000"), ""},
		{"short integers are seconds", "a.txt", "0\n7\n1700000000\n", ""},
		{"decimals beside integers", "a.txt", "1700000000.5\n1700000000\n", ""},
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/%d workers", tt.name, workers), func(t *testing.T) {
				ts, err := readBytes(tt.file, []byte(tt.text), Options{Workers: workers})
				if tt.want == "" {
					require.NoError(t, err)
					assert.Len(t, ts, strings.Count(tt.text, "\n"))
					return
				}
				requireInputError(t, err, tt.file)
				assert.ErrorContains(t, err, tt.want)
			})
		}
	}
	t.Run("a given unit reads all alike", func(t *testing.T) {
		ts, err := readBytes("a.txt", []byte("1700000000000\n1700000000\n"), Options{Unit: UnitMillis})
		require.NoError(t, err)
		assert.Equal(t, []int64{1700000000000_000000, 1700000000_000000}, ts)
	})
	t.Run("the report says what the chunks detected", func(t *testing.T) {
		r := NewReader("a.txt", strings.NewReader(lines(perChunk, fmt.Sprintf("%15s", "1.5"))+lines(3, "1700000000000")), Options{Workers: 4})
		for {
			if _, err := r.Next(); err != nil {
				require.Equal(t, io.EOF, err)
				break
			}
		}
		assert.Equal(t, "decimal seconds", r.Detected())
	})
}

// TestBOM: a UTF-8 byte-order mark at the start is dropped in every layout,
// gzipped or not.
func TestBOM(t *testing.T) {
	const bom = "\ufeff"
	tests := []struct {
		name, file, text string
		opt              Options
		want             []int64
		format           Format
	}{
		{"plain", "a.txt", bom + "1.5\n2\n", Options{}, []int64{15e8, 2e9}, FormatPlain},
		{"plain sniffed", "a", bom + "1.5\n", Options{}, []int64{15e8}, FormatPlain},
		{"csv header by name", "a.csv", bom + "ts,k\n1.5,a\n", Options{TimeCol: "ts"}, []int64{15e8}, FormatCSV},
		{"csv no header", "a.csv", bom + "1.5,a\n", Options{}, []int64{15e8}, FormatCSV},
		{"jsonl", "a.jsonl", bom + `{"ts":1.5}` + "\n", Options{}, []int64{15e8}, FormatJSONL},
		{"jsonl sniffed", "a", bom + `{"ts":1.5}` + "\n", Options{}, []int64{15e8}, FormatJSONL},
		{"plain with CRLF", "a.txt", bom + "1\r\n2\r\n", Options{}, []int64{1e9, 2e9}, FormatPlain},
		{"only the first is dropped", "a.txt", bom + bom + "1\n", Options{}, nil, FormatPlain},
	}
	for _, tt := range tests {
		for _, gz := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/gzip %v", tt.name, gz), func(t *testing.T) {
				data := []byte(tt.text)
				if gz {
					data = gzipped(t, tt.text)
				}
				r := NewReader(tt.file, bytes.NewReader(data), tt.opt)
				var ts []int64
				var err error
				for {
					var rec Record
					if rec, err = r.Next(); err != nil {
						break
					}
					ts = append(ts, rec.At)
				}
				if tt.want == nil {
					requireInputError(t, err, tt.file)
					assert.ErrorContains(t, err, tt.file+":1: not a timestamp")
					return
				}
				require.Equal(t, io.EOF, err)
				assert.Equal(t, tt.want, ts)
				assert.Equal(t, tt.format, r.Format())
			})
		}
	}
}

// endless is an input that never ends: a prefix, then one byte forever.
type endless struct {
	prefix string
	b      byte
	read   int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.b
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestEndlessLine: a line that never ends (/dev/zero, a stream without a
// newline) is an input error once it passes MaxLine, in every layout,
// having read a bounded amount; before, plain and JSON lines read forever.
func TestEndlessLine(t *testing.T) {
	tests := []struct {
		name, file string
		in         *endless
		opt        Options
		line       int64
	}{
		{"zeros", "/dev/zero", &endless{b: 0}, Options{}, 1},
		{"plain digits", "a.txt", &endless{prefix: "1\n2\n", b: '3'}, Options{}, 3},
		{"plain sniffed", "-", &endless{prefix: "1\n", b: '1'}, Options{}, 2},
		{"jsonl", "a.jsonl", &endless{prefix: `{"ts":1}` + "\n" + `{"ts":"`, b: '1'}, Options{}, 2},
		{"jsonl from the first byte", "a.jsonl", &endless{prefix: `{"ts":"`, b: ' '}, Options{}, 1},
		{"csv", "a.csv", &endless{prefix: "ts,k\n1,a\n2,", b: 'k'}, Options{}, 3},
		{"csv header", "a.csv", &endless{b: 'k'}, Options{}, 1},
		{"nginx", "a.log", &endless{b: 'x'}, Options{Format: FormatNginx}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(tt.file, tt.in, Options{Workers: 2})
			r.opt.Format = tt.opt.Format
			var err error
			for err == nil {
				_, err = r.Next()
			}
			ie := requireInputError(t, err, tt.file)
			assert.Equal(t, tt.line, ie.Line)
			assert.Contains(t, ie.Msg, "longer than")
			assert.Less(t, tt.in.read, int64(4*MaxLine), "bytes read before the error")
		})
	}
	// --skip-invalid reads through a long line to skip it, but not through
	// one that never ends.
	t.Run("skip-invalid", func(t *testing.T) {
		in := &endless{prefix: "1\n", b: 0}
		r := NewReader("/dev/zero", in, Options{Workers: 2, SkipInvalid: true})
		var err error
		for err == nil {
			_, err = r.Next()
		}
		ie := requireInputError(t, err, "/dev/zero")
		assert.Equal(t, int64(2), ie.Line)
		assert.Equal(t, "line longer than 67108864 bytes, even for sendlog.Options.SkipInvalid", ie.Msg)
		assert.Less(t, in.read, int64(MaxSkip+4*MaxLine), "bytes read before the error")
	})
}

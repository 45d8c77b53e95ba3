package sendlog

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func textsOf(recs []Record) [][]string {
	var out [][]string
	for _, r := range recs {
		out = append(out, r.Texts)
	}
	return out
}

func TestTextsCSV(t *testing.T) {
	opt := Options{Unit: UnitNanos, StatusCol: "status", Texts: []TextSource{
		{Col: "RateLimit"}, {Col: "3"}, {Col: "absent"}, {},
	}}
	recs, _, err := readAll("a.csv", "ts,status,ratelimit\n1,200,\"limit=5, remaining=4\"\n2,429, x \n3,200,\n", opt)
	require.NoError(t, err)
	assert.Equal(t, [][]string{
		{"limit=5, remaining=4", "limit=5, remaining=4", "", ""},
		{"x", "x", "", ""},
		{"", "", "", ""},
	}, textsOf(recs))

	// Without texts named, records carry none.
	recs, _, err = readAll("a.csv", "ts,x\n1,a\n", Options{Unit: UnitNanos})
	require.NoError(t, err)
	assert.Equal(t, [][]string{nil}, textsOf(recs))
}

func TestTextsJSON(t *testing.T) {
	opt := Options{Unit: UnitNanos, Texts: []TextSource{
		{Field: "h.ratelimit"}, {Field: "n"}, {Field: "list"}, {Field: "obj"}, {Field: "gone"}, {Field: "nul"},
	}}
	line := `{"ts":1,"h":{"ratelimit":" limit=5 "},"n":1.50,"list":["a",2,["b"]],"obj":{"k":1},"nul":null}`
	recs, _, err := readAll("a.jsonl", line+"\n", opt)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"limit=5", "1.50", "a, 2, b", `{"k":1}`, "", ""}}, textsOf(recs))
}

// TestTextsAcrossBatches reads texts from a log long enough to be parsed
// in many batches, each send keeping its own.
func TestTextsAcrossBatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("ts,h\n")
	const n = 60_000
	for i := range n {
		fmt.Fprintf(&b, "%d,v%d\n", i, i)
	}
	recs, _, err := readAll("big.csv", b.String(), Options{Unit: UnitNanos, Texts: []TextSource{{Col: "h"}}})
	require.NoError(t, err)
	require.Len(t, recs, n)
	for i, r := range recs {
		if !assert.Equal(t, []string{fmt.Sprintf("v%d", i)}, r.Texts, "line %d", i+2) {
			return
		}
	}
}

// FuzzTexts holds the texts read to encoding/csv's and encoding/json's
// reading of the same lines: a CSV log of an epoch and a fuzzed column,
// and a JSON-lines log with the fuzzed text as a string field.
func FuzzTexts(f *testing.F) {
	for _, s := range []string{"a", "\"a,b\"", " x ", "", "\"q\"\"q\"", "a\x01b", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		pieces := strings.Split(raw, "\x01")
		var c strings.Builder
		c.WriteString("ts,h\n")
		for i, p := range pieces {
			fmt.Fprintf(&c, "%d,%s\n", i+1, p)
		}
		recs, _, err := readAll("f.csv", c.String(), Options{Unit: UnitNanos, Texts: []TextSource{{Col: "h"}}})
		r := csv.NewReader(strings.NewReader(c.String()))
		r.FieldsPerRecord = -1
		want, werr := r.ReadAll()
		if err == nil && werr == nil && len(want)-1 == len(recs) {
			for i, rec := range recs {
				h := ""
				if len(want[i+1]) > 1 {
					h = strings.TrimSpace(want[i+1][1])
				}
				assert.Equal(t, h, rec.Texts[0], "%q line %d", c.String(), i+2)
			}
		}
		var j strings.Builder
		for i, p := range pieces {
			q, _ := json.Marshal(p)
			fmt.Fprintf(&j, "{\"ts\":%d,\"h\":%s}\n", i+1, q)
		}
		recs, _, err = readAll("f.jsonl", j.String(), Options{Unit: UnitNanos, Texts: []TextSource{{Field: "h"}}})
		if err != nil {
			return // text the JSON reader refuses (a NUL byte) is refused whole
		}
		dec := json.NewDecoder(strings.NewReader(j.String()))
		for i := 0; ; i++ {
			var m struct{ H string }
			if dec.Decode(&m) == io.EOF {
				break
			}
			require.Less(t, i, len(recs))
			assert.Equal(t, strings.TrimSpace(m.H), recs[i].Texts[0], "line %d", i+1)
		}
	})
}

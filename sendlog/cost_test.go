package sendlog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var tokens = []CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}

// TestCostsRead: each send's cost comes from its column or field, in CSV
// and JSON lines, with a key, numbers or strings, by name or index.
func TestCostsRead(t *testing.T) {
	for _, c := range []struct {
		name, text string
		opt        Options
	}{
		{"a.csv", "ts_ms,key,tokens\n1000,a,5\n1001,b, 0\n1002,a,70000\n", Options{KeyCol: "key", Costs: tokens}},
		{"a.csv", "1000,a,5\n1001,b,0\n1002,a,70000\n", Options{TimeCol: "1", Unit: UnitMillis, KeyCol: "2", Costs: []CostSource{{Unit: "tokens", Col: "3"}}}},
		{"a.jsonl", `{"ts_ms":1000,"key":"a","tokens":5}` + "\n" + `{"ts_ms":1001,"key":"b","tokens":"0"}` + "\n" + `{"ts_ms":1002,"key":"a","tokens":70000}` + "\n", Options{KeyField: "key", Costs: tokens}},
	} {
		recs, _, err := readAll(c.name, c.text, c.opt)
		require.NoError(t, err, c.text)
		require.Len(t, recs, 3)
		var got []int64
		for _, r := range recs {
			got = append(got, r.Cost[0])
		}
		assert.Equal(t, []int64{5, 0, 70000}, got, c.text)
		assert.Equal(t, "a", string(recs[2].Key))
	}
}

// TestCostsRefused: a missing, negative, fractional or non-numeric cost is
// an input error naming the line, the unit and the text.
func TestCostsRefused(t *testing.T) {
	for cost, want := range map[string]string{
		"":                    `a.csv:3: tokens cost "": missing`,
		"-3":                  `a.csv:3: tokens cost "-3": negative`,
		"1.5":                 `a.csv:3: tokens cost "1.5": not a whole number`,
		"ten":                 `a.csv:3: tokens cost "ten": not a number`,
		"1e3":                 `a.csv:3: tokens cost "1e3": not a whole number`,
		"9999999999999999999": `a.csv:3: tokens cost "9999999999999999999": more than 18 digits`,
	} {
		_, _, err := readAll("a.csv", "ts_ms,tokens\n1000,5\n1001,"+cost+"\n", Options{Costs: tokens})
		assert.ErrorContains(t, err, want, "cost %q", cost)
	}
	_, _, err := readAll("a.csv", "ts_ms,tokens\n1000,5\n1001\n", Options{Costs: tokens})
	assert.ErrorContains(t, err, "a.csv:3: no column 2 (the tokens cost)")
	_, _, err = readAll("a.jsonl", `{"ts_ms":1000}`+"\n", Options{Costs: tokens})
	assert.ErrorContains(t, err, `a.jsonl:1: sendlog.Options.Costs tokens=tokens: no field "tokens"`)
	_, _, err = readAll("a.txt", "1000\n", Options{Format: FormatPlain, Costs: tokens})
	assert.ErrorContains(t, err, "a plain log carries no tokens cost")
	_, _, err = readAll("a.csv", "ts_ms,x\n1000,5\n", Options{Costs: tokens})
	assert.ErrorContains(t, err, `no column named "tokens"`)
}

// TestCostsLeaveTimesAlone: asking for a cost column reads the same times,
// keys and lines as without it (the fast paths step aside), over random
// logs of many chunks.
func TestCostsLeaveTimesAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("ts_ns,key,tokens\n")
	at := int64(1700000000000000000)
	want := []int64{}
	for range 40000 {
		at += rng.Int64N(1e9)
		c := rng.Int64N(5000)
		want = append(want, c)
		fmt.Fprintf(&b, "%d,k%d,%d\n", at, rng.IntN(50), c)
	}
	plain := readKept(t, b.String(), Options{KeyCol: "key"})
	costed := readKept(t, b.String(), Options{KeyCol: "key", Costs: tokens})
	require.Len(t, costed, len(plain))
	for i := range plain {
		assert.Equal(t, plain[i].At, costed[i].At)
		assert.Equal(t, plain[i].Line, costed[i].Line)
		assert.Equal(t, string(plain[i].Key), string(costed[i].Key))
		require.Equal(t, want[i], costed[i].Cost[0], "line %d", plain[i].Line)
	}
}

// readKept reads every record of a CSV log, each key copied (a Record's
// key is valid only until the next call to Next).
func readKept(t *testing.T, text string, opt Options) []Record {
	t.Helper()
	recs, _, err := readAll("a.csv", text, opt)
	require.NoError(t, err)
	r := NewReader("a.csv", strings.NewReader(text), opt)
	defer r.Close()
	for i := range recs {
		rec, err := r.Next()
		require.NoError(t, err)
		recs[i].Key = append([]byte(nil), rec.Key...)
	}
	return recs
}

package sendlog

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readSettled reads every record of text with opt.
func readSettled(t *testing.T, text string, opt Options) ([]Record, error) {
	t.Helper()
	r := NewReader("sends", strings.NewReader(text), opt)
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
		out = append(out, rec)
	}
}

// TestSettledCSV: the estimate, the actual and the settlement instant
// are read from their columns; an empty settlement leaves the send never
// settled, its actual its estimate.
func TestSettledCSV(t *testing.T) {
	opt := Options{Format: FormatCSV, Unit: UnitSeconds, SettledCol: "done",
		Costs: []CostSource{{Unit: "tokens", Col: "est", ActualCol: "used"}}}
	recs, err := readSettled(t, "ts,est,used,done\n1,60,20,10\n5,50,,\n", opt)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, int64(10e9), recs[0].Settled)
	assert.Equal(t, int64(60), recs[0].Cost[0])
	assert.Equal(t, int64(20), recs[0].Actual[0])
	assert.Equal(t, int64(NotSettled), recs[1].Settled)
	assert.Equal(t, int64(50), recs[1].Actual[0])
}

// TestSettledJSON: a missing or null settlement field is a send never
// settled.
func TestSettledJSON(t *testing.T) {
	opt := Options{Format: FormatJSONL, Unit: UnitSeconds, SettledField: "done",
		Costs: []CostSource{{Unit: "tokens", Field: "est", ActualField: "used"}}}
	recs, err := readSettled(t, `{"ts":1,"est":60,"used":20,"done":10}
{"ts":2,"est":5}
{"ts":3,"est":7,"done":null}
`, opt)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, int64(10e9), recs[0].Settled)
	assert.Equal(t, int64(20), recs[0].Actual[0])
	assert.Equal(t, []int64{NotSettled, NotSettled}, []int64{recs[1].Settled, recs[2].Settled})
	assert.Equal(t, int64(7), recs[2].Actual[0])
}

// TestSettledErrors: bad settlements name the line and what is wrong.
func TestSettledErrors(t *testing.T) {
	opt := Options{Format: FormatCSV, Unit: UnitSeconds, SettledCol: "done",
		Costs: []CostSource{{Unit: "tokens", Col: "est", ActualCol: "used"}}}
	for text, want := range map[string]string{
		"ts,est,used,done\n5,1,1,4\n":    "sends:2: settled before the send",
		"ts,est,used,done\n5,1,,6\n":     `actual tokens cost "": missing`,
		"ts,est,used,done\n5,1,-1,6\n":   `actual tokens cost "-1": negative`,
		"ts,est,used,done\n5,1,1,soon\n": "settlement:",
		"ts,est,used\n5,1,1\n":           `no column named "done"`,
	} {
		_, err := readSettled(t, text, opt)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
	_, err := readSettled(t, "ts,est,used\n5,1,1\n", Options{Format: FormatCSV, Costs: []CostSource{{Unit: "tokens", Col: "est", ActualCol: "used"}}})
	assert.ErrorContains(t, err, "SettledCol or SettledField")
	_, err = readSettled(t, "ts,done\n5,6\n", Options{Format: FormatCSV, SettledCol: "done"})
	assert.ErrorContains(t, err, "name the costs")
}

package sendlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAccessFormatOnCSVQuotesTheLineOnce pins down that --input-format
// nginx on a CSV file printed the offending line twice in one message.
func TestAccessFormatOnCSVQuotesTheLineOnce(t *testing.T) {
	for _, f := range []Format{FormatNginx, FormatApache} {
		_, _, err := readAll("a.csv", "ts,key\n1700000000000,a\n", Options{Format: f})
		require.Error(t, err, f)
		msg := err.Error()
		assert.Equal(t, 1, strings.Count(msg, `"ts,key"`), "%s: %s", f, msg)
		assert.Contains(t, msg, "a.csv:1:", f)
		assert.Contains(t, msg, "looks like CSV", f)
	}
}

// TestTimeColumnByName pins down that a header key,sent_at_ms was read
// with the key as the time: the common time names are recognised, with
// the unit their suffix names, and Chosen says so.
func TestTimeColumnByName(t *testing.T) {
	tests := []struct {
		header, row string
		opt         Options
		want        int64
		chosen      string
	}{
		{"key,sent_at_ms", "a,1700000000000", Options{}, 1700000000000e6, `time from column 2 "sent_at_ms" (by its name), in ms (by its suffix)`},
		{"key,ts_ms", "a,1700000000", Options{}, 1700000000e6, `time from column 2 "ts_ms" (by its name), in ms (by its suffix)`},
		{"id,created_at", "a,1700000000.5", Options{}, 17000000005e8, `time from column 2 "created_at" (by its name)`},
		{"id,Sent_At_us", "a,1700000000000000", Options{}, 1700000000000000e3, `time from column 2 "Sent_At_us" (by its name), in us (by its suffix)`},
		{"id,timestamp_s", "a,1700000000", Options{}, 1700000000e9, `time from column 2 "timestamp_s" (by its name), in s (by its suffix)`},
		{"ts,key", "1700000000,a", Options{}, 1700000000e9, ""},
		{"key,sent_at_ms", "a,1700000000", Options{Unit: UnitSeconds}, 1700000000e9, `time from column 2 "sent_at_ms" (by its name)`},
		{"key,x_ns", "a,1700000000", Options{TimeCol: "x_ns"}, 1700000000, `time in ns (by the suffix of "x_ns")`},
		{"created,key", "1700000000,a", Options{}, 1700000000e9, ""}, // the first column, not a name taken
		{"created_ms,key", "1700000000,a", Options{}, 1700000000e6, `time in ms (by the suffix of "created_ms")`},
	}
	for _, tt := range tests {
		recs, r, err := readAll("a.csv", tt.header+"\n"+tt.row+"\n", tt.opt)
		if assert.NoError(t, err, tt.header) && assert.Len(t, recs, 1, tt.header) {
			assert.Equal(t, tt.want, recs[0].At, tt.header)
			assert.Equal(t, tt.chosen, r.Chosen(), tt.header)
		}
	}
	recs, r, err := readAll("a.jsonl", `{"k":"a","sent_at_ms":1700000000}`+"\n", Options{})
	require.NoError(t, err)
	assert.Equal(t, int64(1700000000e6), recs[0].At)
	assert.Equal(t, `time from field "sent_at_ms" (by its name), in ms (by its suffix)`, r.Chosen())
}

// TestTimeColumnErrorNamesTheColumn pins down that a time column taken
// as the first for want of a name failed quoting the line alone: the
// error names the column, lists the header and the column that holds a
// time, as a Fix and without naming a flag.
func TestTimeColumnErrorNamesTheColumn(t *testing.T) {
	_, _, err := readAll("a.csv", "key,when\na,1700000000000\n", Options{})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, int64(2), ie.Line)
	assert.Contains(t, ie.Msg, `column 1 ("key")`)
	assert.Contains(t, ie.Msg, "the header is key,when")
	assert.Contains(t, ie.Msg, `column 2 ("when") holds a time`)
	assert.NotContains(t, ie.Msg, "--")
	if assert.NotNil(t, ie.Fix) {
		assert.Equal(t, Fix{Option: "TimeCol", Value: "when"}, *ie.Fix)
	}
	// A named column is the user's choice: the error stays short.
	_, _, err = readAll("a.csv", "key,when\na,1700000000000\n", Options{TimeCol: "key"})
	require.ErrorAs(t, err, &ie)
	assert.NotContains(t, ie.Msg, "header")
	assert.Nil(t, ie.Fix)
}

// TestUnitTooCoarseSaysWhatFits pins down that --unit s on millisecond
// data said "beyond year 2262 in nanoseconds": the error says what was
// read in which unit, and the unit the digits fit, as a Fix.
func TestUnitTooCoarseSaysWhatFits(t *testing.T) {
	for _, tt := range []struct {
		unit Unit
		text string
		fits string
	}{{UnitSeconds, "1700000000000", "ms"}, {UnitSeconds, "1700000000000000", "us"}, {UnitMillis, "1700000000000000000", "ns"}} {
		for name, text := range map[string]string{"a.csv": "ts\n" + tt.text + "\n", "a.txt": tt.text + "\n"} {
			_, _, err := readAll(name, text, Options{Unit: tt.unit})
			var ie *InputError
			require.ErrorAs(t, err, &ie, tt.text)
			assert.Contains(t, ie.Msg, tt.text+" read in "+tt.unit.String()+" is beyond the year 2262", name)
			assert.Contains(t, ie.Msg, "epoch in "+tt.fits+" it is 2023-11-14T22:13:20Z", name)
			assert.NotContains(t, ie.Msg, "nanoseconds", name)
			if assert.NotNil(t, ie.Fix, name) {
				assert.Equal(t, Fix{Option: "Unit", Value: tt.fits}, *ie.Fix)
			}
		}
	}
}

// TestCostColumnIsNamedAsGiven: a cost column out of range or missing is
// named by its unit and column, as --cost gives them, not by the index
// of an internal slice.
func TestCostColumnIsNamedAsGiven(t *testing.T) {
	for col, want := range map[string]string{
		"0":  "sendlog.Options.Costs tokens=0: the first line has 2 columns",
		"x":  `sendlog.Options.Costs tokens=x: no column named "x" in the header`,
		"99": "sendlog.Options.Costs tokens=99: the first line has 2 columns",
	} {
		_, _, err := readAll("c.csv", "ts_ns,tokens\n0,10\n", Options{Costs: []CostSource{{Unit: "tokens", Col: col}}})
		require.Error(t, err, col)
		assert.Contains(t, err.Error(), want, col)
	}
}

// TestJSONTimeFieldHint: a JSON record with none of the default time
// fields is an error listing them, whose Fix names the first field that
// holds a time from 2000 on (nested ones included), and none where no
// field does: a status code or a count is not offered.
func TestJSONTimeFieldHint(t *testing.T) {
	for _, tt := range []struct{ text, fix string }{
		{`{"id":"x","created":1700000000,"usage":{"total_tokens":40}}`, "created"},
		{`{"status":200,"n":946684799,"meta":{"at":"2026-01-05T09:00:00Z"}}`, "meta.at"},
		{`{"status":200,"usage":{"total_tokens":40},"id":"2026"}`, ""},
		{`{"when_ms":1700000000000}`, "when_ms"},
	} {
		_, _, err := readAll("a.jsonl", tt.text+"\n", Options{})
		var ie *InputError
		require.ErrorAs(t, err, &ie, tt.text)
		assert.Contains(t, ie.Msg, "no time field (ts, time, timestamp, sent_at or created_at, each maybe ending in _ms, _us, _ns or _s)", tt.text)
		if tt.fix == "" {
			assert.Nil(t, ie.Fix, tt.text)
			continue
		}
		require.NotNil(t, ie.Fix, tt.text)
		assert.Equal(t, Fix{Option: "TimeField", Value: tt.fix}, *ie.Fix, tt.text)
	}
}

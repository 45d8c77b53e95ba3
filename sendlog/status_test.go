package sendlog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

func statusesOf(recs []Record) []int16 {
	var out []int16
	for _, r := range recs {
		out = append(out, r.Status)
	}
	return out
}

func TestStatusColumnAndField(t *testing.T) {
	recs, _, err := readAll("a.csv", "ts,code,key\n1,200,a\n2,\"429\",b\n3, 503 ,a\n", Options{StatusCol: "code", KeyCol: "key", Unit: UnitNanos})
	require.NoError(t, err)
	assert.Equal(t, []int16{200, 429, 503}, statusesOf(recs))
	assert.Equal(t, []int64{1, 2, 3}, times(recs))

	recs, _, err = readAll("a.jsonl", `{"ts":1,"res":{"status":200}}`+"\n"+`{"ts":2,"res":{"status":"429"}}`+"\n", Options{StatusField: "res.status", Unit: UnitNanos})
	require.NoError(t, err)
	assert.Equal(t, []int16{200, 429}, statusesOf(recs))

	// Without a status, records carry none, and the fast paths stay.
	recs, _, err = readAll("a.csv", "ts,code\n1,200\n", Options{Unit: UnitNanos})
	require.NoError(t, err)
	assert.Equal(t, []int16{0}, statusesOf(recs))
}

func TestStatusErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		text string
		opt  Options
		want string
	}{
		"not a number": {"ts,status\n1,ok\n", Options{StatusCol: "status"}, `a.log:2: status "ok": not an HTTP status code (100 to 599): "1,ok"`},
		"out of range": {"ts,status\n1,42\n", Options{StatusCol: "status"}, `a.log:2: status "42": not an HTTP status code (100 to 599): "1,42"`},
		"no column":    {"ts,code\n1,200\n", Options{StatusCol: "status"}, `a.log:1: no column named "status" in the header: "ts,code"`},
		"json null":    {`{"ts":1,"status":null}` + "\n", Options{StatusField: "status"}, `a.log:1: field "status" is null: "{\"ts\":1,\"status\":null}"`},
	} {
		t.Run(name, func(t *testing.T) {
			tc.opt.Unit = UnitNanos
			_, _, err := readAll("a.log", tc.text, tc.opt)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// TestStatusFilter: --status keeps the calls of a status column it
// matches, and counts the rest as filtered.
func TestStatusFilter(t *testing.T) {
	f, err := accesslog.NewFilter(accesslog.FilterSpec{Statuses: []string{"2xx", "429"}})
	require.NoError(t, err)
	recs, r, err := readAll("a.csv", "ts,status\n1,200\n2,503\n3,429\n4,201\n", Options{StatusCol: "status", AccessFilter: f, Unit: UnitNanos})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 3, 4}, times(recs))
	assert.EqualValues(t, 1, r.Filtered())
}

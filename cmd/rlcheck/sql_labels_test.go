package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/pgtest"
)

// TestSQLRunSaysWhatItDidNotCompute pins down that sql --run printed MAX
// IN WINDOW 0 beside 7 violations when the largest window was not
// computed, and named sends by their rank in time order as "line N", one
// lower than check's line for a CSV with a header: it prints "-" and says
// why, and names a send by its tiebreak column, or by its rank, labelled.
func TestSQLRunSaysWhatItDidNotCompute(t *testing.T) {
	srv, db := pgtest.Start(t)
	_, err := db.Exec("CREATE TABLE burst (ts_ms bigint, line bigint)")
	require.NoError(t, err)
	// Eight sends 10 ms apart: 1/1s breaks seven times. In a CSV with a
	// header, they are lines 2 to 9.
	var csv strings.Builder
	csv.WriteString("ts_ms\n")
	var vals []string
	for i := range 8 {
		ts := 1767225600000 + 10*i
		vals = append(vals, fmt.Sprintf("(%d, %d)", ts, i+2))
		fmt.Fprintf(&csv, "%d\n", ts)
	}
	_, err = db.Exec("INSERT INTO burst VALUES " + strings.Join(vals, ","))
	require.NoError(t, err)
	args := []string{"sql", "--rules", "1/1s", "--table", "burst", "--time-col", "ts_ms", "--time-unit", "ms", "--run", srv.URL}
	out, errOut, code := run(t, "", args...)
	require.Equal(t, exitViolations, code, errOut)
	assert.Regexp(t, `(?m)^1/1s +7 +- +#2 in time order at `, out)
	assert.Contains(t, out, "from #1 in time order")
	assert.Contains(t, out, "not checked: the largest count in one window, shown as - (--max-window adds it")
	assert.NotContains(t, out, "line ")
	// With the loader's line numbers as the tiebreak, check's own words.
	out, errOut, code = run(t, "", append(args, "--tiebreak", "line", "--max-window")...)
	require.Equal(t, exitViolations, code, errOut)
	check, _, _ := run(t, csv.String(), "check", "--rules", "1/1s", "--input-format", "csv", "-")
	assert.Regexp(t, `(?m)^1/1s +7 +8 +line 3 at `, out)
	assert.Equal(t, tail(check, 2), tail(out, 2))
}

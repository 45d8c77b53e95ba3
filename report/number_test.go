package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// TestCountsAgreeInNumber: one send, one violation, one key read as such
// in every format a person reads ("1 sends holding 10 tokens" read as
// several).
func TestCountsAgreeInNumber(t *testing.T) {
	rules, err := rule.ParseList("9 tokens/1s")
	require.NoError(t, err)
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts_ns", Unit: sendlog.UnitNanos, KeyCol: "key",
		Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}
	res, err := logcheck.Run([]logcheck.Input{{Name: "one.csv", R: strings.NewReader("ts_ns,key,tokens\n0,a,10\n")}},
		logcheck.Config{Rules: rules, Read: read})
	require.NoError(t, err)
	for _, format := range []string{"text", "github"} {
		var out bytes.Buffer
		require.NoError(t, report.Write(&out, []*report.Result{res}, report.Options{Format: format}), format)
		assert.NotRegexp(t, `\b1 (sends|violations|keys|requests|lines)\b`, out.String(), format)
		if format == "text" {
			assert.Contains(t, out.String(), "one.csv: 1 send from")
			assert.Contains(t, out.String(), "1 send holding 10 tokens in the window")
			assert.Contains(t, out.String(), "9 tokens/1s 1 violation in 1 of 1 key")
			assert.Contains(t, out.String(), "FAIL: 1 violation (")
		}
	}
}

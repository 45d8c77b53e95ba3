package accesslog_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// TestSecondStampsCannotProve pins the example in docs/access-logs.md: two
// logs whose one-second $time_local stamps are identical, one keeping 5/1s
// and one breaking it.
func TestSecondStampsCannotProve(t *testing.T) {
	spreadStamps, spreadStarts := readSeconds(t, "testdata/seconds/spread.log")
	bunchedStamps, bunchedStarts := readSeconds(t, "testdata/seconds/bunched.log")
	require.Equal(t, spreadStamps, bunchedStamps, "second stamps")
	r, err := rule.Parse("5/1s")
	require.NoError(t, err)
	for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
		spread, err := checker.Check(spreadStarts, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
		require.NoError(t, err)
		bunched, err := checker.Check(bunchedStarts, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
		require.NoError(t, err)
		t.Logf("%s windows: spread.log %d violations (max %d in a window), bunched.log %d violations (max %d in a window)",
			b, spread.Violations(), spread.Rules[0].MaxInWindow, bunched.Violations(), bunched.Rules[0].MaxInWindow)
		assert.Equal(t, int64(0), spread.Violations(), "%s: spread.log", b)
		assert.Equal(t, int64(5), bunched.Violations(), "%s: bunched.log", b)
	}
}

// readSeconds returns a log's $time_local stamps, one a line, and its starts.
func readSeconds(t *testing.T, path string) (string, []int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var stamps bytes.Buffer
	var starts []int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		e, err := accesslog.ParseNginx(line)
		require.NoError(t, err)
		open, shut := bytes.IndexByte(line, '['), bytes.IndexByte(line, ']')
		stamps.Write(line[open : shut+1])
		stamps.WriteByte('\n')
		starts = append(starts, e.Start)
	}
	return stamps.String(), starts
}

package accesslog_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"

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
	if spreadStamps != bunchedStamps {
		t.Fatalf("second stamps differ:\n%s\n%s", spreadStamps, bunchedStamps)
	}
	r, err := rule.Parse("5/1s")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
		spread, err := checker.Check(spreadStarts, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
		if err != nil {
			t.Fatal(err)
		}
		bunched, err := checker.Check(bunchedStarts, checker.Config{Rules: []rule.Rule{r}, Boundary: b})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s windows: spread.log %d violations (max %d in a window), bunched.log %d violations (max %d in a window)",
			b, spread.Violations(), spread.Rules[0].MaxInWindow, bunched.Violations(), bunched.Rules[0].MaxInWindow)
		if spread.Violations() != 0 || bunched.Violations() != 5 {
			t.Errorf("%s: spread.log %d violations, bunched.log %d; want 0 and 5", b, spread.Violations(), bunched.Violations())
		}
	}
}

// readSeconds returns a log's $time_local stamps, one a line, and its starts.
func readSeconds(t *testing.T, path string) (string, []int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stamps bytes.Buffer
	var starts []int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		e, err := accesslog.ParseNginx(line)
		if err != nil {
			t.Fatal(err)
		}
		open, shut := bytes.IndexByte(line, '['), bytes.IndexByte(line, ']')
		stamps.Write(line[open : shut+1])
		stamps.WriteByte('\n')
		starts = append(starts, e.Start)
	}
	return stamps.String(), starts
}

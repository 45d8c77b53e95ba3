package difftest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/watch"
)

// runWatch follows the case's CSV once with watch's library, printing
// violations as JSON lines, and reads them back per key and rule, with
// the summary's counts and peaks per rule.
func runWatch(t *testing.T, c Case) (map[string][]Verdict, *watch.Summary) {
	t.Helper()
	return runWatchOn(t, c, c.CSV(), c.ReadOptions())
}

// runWatchOn is runWatch on the case written as text, read with read.
func runWatchOn(t *testing.T, c Case, text string, read sendlog.Options) (map[string][]Verdict, *watch.Summary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sends.csv")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // read what is there, then stop
	var out bytes.Buffer
	sum, err := watch.Run(ctx, watch.Config{Rules: c.Rules, Boundary: c.Boundary, Read: read,
		Paths: []string{path}, JSON: true, Out: &out, ErrOut: &out})
	require.NoError(t, err, c.String())
	got := map[string][]Verdict{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var v watch.Violation
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), sc.Text())
		if got[v.Key] == nil {
			got[v.Key] = make([]Verdict, len(c.Rules))
		}
		r := ruleIndex(t, c, v.Rule, got[v.Key], v.Line)
		got[v.Key][r].Lines = append(got[v.Key][r].Lines, v.Line)
		if v.BucketLevel != "" {
			got[v.Key][r].Levels = append(got[v.Key][r].Levels, v.BucketLevel)
		}
	}
	return got, sum
}

// ruleIndex finds a rule by the text reports give it: of equal rules, the
// first whose verdicts so far do not hold the line.
func ruleIndex(t *testing.T, c Case, text string, so []Verdict, line int64) int {
	for i, r := range c.Rules {
		if r.String() == text && !slices.Contains(so[i].Lines, line) {
			return i
		}
	}
	require.Failf(t, "unknown rule", "%q among %v", text, c.Rules)
	return -1
}

// TestWatchMatchesOracle: watch's library, following the case's log,
// reports the very sends the oracle finds violating (by line), per key,
// with a bucket's levels, and its summary counts them and gives each
// rule's fullest window over the keys.
func TestWatchMatchesOracle(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			watchMatches(t, draws(f, testrun.Seeds(6, 150), 2), false)
		})
	}
}

// TestWatchReservedMatchesOracle: as TestWatchMatchesOracle, on logs of
// reserved sends read with their actual costs and settlement instants,
// under both boundaries.
func TestWatchReservedMatchesOracle(t *testing.T) {
	for _, f := range Families {
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			t.Run(f.String()+"/"+b.String(), func(t *testing.T) {
				cases := drawReserved(f, testrun.Seeds(4, 100), 43)
				for i := range cases {
					cases[i].Boundary = b
				}
				watchMatches(t, cases, true)
			})
		}
	}
}

// watchMatches runs watch on each case and compares it with the oracle.
func watchMatches(t *testing.T, cases []Case, reserved bool) {
	{
		{
			for i, c := range cases {
				want := Expect(c)
				got, sum := runWatch(t, c)
				if reserved {
					got, sum = runWatchOn(t, c, c.ReservedCSV(), c.ReservedReadOptions())
				}
				wantCounts, wantPeaks := make([]int64, len(c.Rules)), make([]int64, len(c.Rules))
				for key, vs := range want {
					for r, v := range vs {
						wantCounts[r] += int64(len(v.Lines))
						wantPeaks[r] = max(wantPeaks[r], v.Max)
						want[key][r].Max = 0 // watch lists no window per key
					}
					if !anyLines(vs) {
						delete(want, key)
					}
				}
				if !assert.Equal(t, want, got, "seed %d: %s", i, c) ||
					!assert.Equal(t, wantCounts, sum.Violations, "seed %d: %s", i, c) ||
					!assert.Equal(t, wantPeaks, sum.Peak, "seed %d: %s", i, c) {
					return
				}
			}
		}
	}
}

// anyLines reports whether some rule of a key was broken.
func anyLines(vs []Verdict) bool {
	for _, v := range vs {
		if len(v.Lines) > 0 {
			return true
		}
	}
	return false
}

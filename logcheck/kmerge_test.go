package logcheck

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// TestMergedAgainstStableSort: several inputs, each out of order within the
// horizon and full of equal times within and across inputs, merged by Run,
// give every group the report (violations, listed windows, first
// violations and fullest windows, all naming file and line) of the checker
// fed their sends stably sorted by time, ties in input then line order,
// and so does the in-flight check where the inputs give end times.
// Some inputs span several chunks, so that equal times meet at the bounds
// of the merge's rounds.
func TestMergedAgainstStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	rules := []rule.Rule{{Limit: 2, Window: 3 * time.Second}, {Limit: 5, Window: 20 * time.Second}}
	iters := testrun.Seeds(20, 60)
	if raceEnabled {
		iters = 30
	}
	for iter := range iters {
		files := 1 + rng.IntN(9)
		big := iter%30 == 0 // inputs of several chunks, so that runs are merged in rounds
		if big {
			files = 2 + rng.IntN(2)
		}
		withKey, withEnd := rng.IntN(2) == 0, rng.IntN(3) == 0
		horizon := time.Duration(rng.IntN(3)) * time.Second
		type send struct {
			at, end int64
			ref     report.Ref
			key     string
		}
		var all []send
		var inputs []Input
		for f := range files {
			var b strings.Builder
			b.WriteString("ts,key,end\n")
			n, newest := 1+rng.IntN(200), int64(0)
			if big {
				n = 20_000
			}
			for line := int64(2); line < int64(n)+2; line++ {
				// Whole seconds, so that equal times across inputs are common.
				at := newest + int64(rng.IntN(3))*int64(rng.IntN(2))
				if rng.IntN(4) == 0 {
					at = max(0, newest-rng.Int64N(int64(horizon/time.Second)+1))
				}
				newest = max(newest, at)
				key := "k"
				if withKey {
					key = fmt.Sprintf("k%d", rng.IntN(3))
				}
				end := at + int64(rng.IntN(3))
				fmt.Fprintf(&b, "%d,%s,%d\n", 1767225600+at, key, 1767225600+end)
				all = append(all, send{(1767225600 + at) * 1e9, (1767225600 + end) * 1e9, report.MakeRef(f, line), key})
			}
			inputs = append(inputs, Input{Name: fmt.Sprintf("f%d.csv", f), R: strings.NewReader(b.String())})
		}
		cfg := Config{Rules: rules, List: 1 << 20, MaxDisorder: horizon}
		if withKey {
			cfg.Read.KeyCol = "key"
		}
		if withEnd {
			cfg.Read.EndCol, cfg.MaxInFlight = "end", 1+rng.IntN(3)
		}
		res, err := Run(inputs, cfg)
		require.NoError(t, err, "iter %d", iter)
		slices.SortStableFunc(all, func(a, b send) int { return cmp.Compare(a.at, b.at) })
		want := map[string]*checker.Checker{}
		wantInFlight := map[string]*checker.InFlight{}
		for _, s := range all {
			k := s.key
			if !withKey {
				k = ""
			}
			if want[k] == nil {
				want[k] = checker.New(checker.Config{Rules: rules, List: 1 << 20})
				wantInFlight[k] = checker.NewInFlight(max(cfg.MaxInFlight, 1))
			}
			require.NoError(t, want[k].Observe(s.at, int64(s.ref)))
			require.NoError(t, wantInFlight[k].Observe(s.at, s.end, int64(s.ref)))
		}
		require.Len(t, res.Groups, len(want), "iter %d: groups", iter)
		for _, g := range res.Groups {
			msg := fmt.Sprintf("iter %d: %d files, key %q", iter, files, g.Key)
			sameReport(t, want[g.Key].Report(), g.Report, msg)
			if withEnd {
				require.Equal(t, wantInFlight[g.Key].Report(), *g.InFlight, "%s: in flight", msg)
			}
		}
	}
}

// sameReport compares two reports part by part, so that a failure shows the
// first listed violation that differs rather than a diff of them all.
func sameReport(t *testing.T, want, got checker.Report, msg string) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	require.Equal(t, want.Sends, got.Sends, msg)
	for i := range want.Rules {
		w, g := want.Rules[i], got.Rules[i]
		require.Equal(t, len(w.Listed), len(g.Listed), "%s: rule %d: listed violations", msg, i)
		for j := range w.Listed {
			require.Equal(t, w.Listed[j], g.Listed[j], "%s: rule %d: listed violation %d", msg, i, j)
		}
		w.Listed, g.Listed = nil, nil
		require.Equal(t, w, g, "%s: rule %d", msg, i)
	}
	require.Equal(t, want, got, msg)
}

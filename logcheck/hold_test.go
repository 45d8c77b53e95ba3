package logcheck

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// heldRuleSets are contracts of every kind, calls and costs, whose limits
// let keys hold a few sends without a checker (and one that lets none).
var heldRuleSets = []string{
	"3/1s, 7/10s",
	"4/1s fixed, 20 tokens/2s",
	"2/1s burst 5, 3/2s first-call",
	"30 tokens/1s burst 40, 6/1s",
	"1/1s",
	"12 tokens/1s fixed, 9 tokens/3s first-call, 5/2s",
}

// TestHeldAndQuietKeysJudgeAsOneChecker: keys that hold their first sends
// without a checker, and keys that give their checker up when their
// windows pass and come back later, get exactly the report of one checker
// fed all their sends (violations numbered in the key's stream, listed
// windows, fullest windows, both boundaries), over logs long enough for
// several sweeps; with ListKeys, the listed keys are the worst and the
// others add up in Unlisted to what they hold.
func TestHeldAndQuietKeysJudgeAsOneChecker(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 15))
	for iter := range 24 {
		rules, err := rule.ParseList(heldRuleSets[iter%len(heldRuleSets)])
		require.NoError(t, err)
		boundary := rule.Boundary(iter / len(heldRuleSets) % 2)
		log, byKey := quietLog(rng, 3*sweepEvery+rng.IntN(sweepEvery), 1+rng.IntN(300))
		cfg := Config{Rules: rules, Boundary: boundary, List: 3, Read: sendlog.Options{KeyCol: "key"}}
		if units := rule.Units(rules); len(units) > 0 {
			cfg.Read.Costs = []sendlog.CostSource{{Unit: units[0], Col: "tokens"}}
		}
		res, err := Run([]Input{{Name: "q.csv", R: strings.NewReader(log)}}, cfg)
		require.NoError(t, err)
		want := map[string]checker.Report{}
		for k, sends := range byKey {
			want[k] = oneChecker(t, cfg, sends)
		}
		msg := fmt.Sprintf("iter %d: %s, %v", iter, heldRuleSets[iter%len(heldRuleSets)], boundary)
		require.Len(t, res.Groups, len(want), msg)
		for _, g := range res.Groups {
			sameReport(t, want[g.Key], g.Report, msg+", key "+g.Key)
		}
		cfg.ListKeys = 1 + rng.IntN(5)
		listed, err := Run([]Input{{Name: "q.csv", R: strings.NewReader(log)}}, cfg)
		require.NoError(t, err)
		sameListing(t, res, listed, cfg.ListKeys, msg)
	}
}

// quietLog returns a CSV log of n sends over keys keys, bursts and long
// silences alike, and each key's sends (time, line, cost).
func quietLog(rng *rand.Rand, n, keys int) (string, map[string][][3]int64) {
	var b strings.Builder
	b.WriteString("ts_ns,key,tokens\n")
	byKey := map[string][][3]int64{}
	at := int64(1_700_000_000) * 1e9
	gaps := []int64{0, 1, 999_999_999, 1e9, 1e9 + 1, 3e6, 2e8, 12e9}
	for line := int64(2); line < int64(n)+2; line++ {
		at += gaps[rng.IntN(len(gaps))]
		k := fmt.Sprintf("k%d", rng.IntN(keys))
		cost := int64(rng.IntN(9))
		fmt.Fprintf(&b, "%d,%s,%d\n", at, k, cost)
		byKey[k] = append(byKey[k], [3]int64{at, int64(report.MakeRef(0, line)), cost})
	}
	return b.String(), byKey
}

// oneChecker is the verdict of one checker fed a key's sends as they came.
func oneChecker(t *testing.T, cfg Config, sends [][3]int64) checker.Report {
	ccfg := checker.Config{Rules: cfg.Rules, Boundary: cfg.Boundary, List: cfg.List}
	for _, c := range cfg.Read.Costs {
		ccfg.Units = append(ccfg.Units, c.Unit)
	}
	c := checker.New(ccfg)
	for _, s := range sends {
		if len(ccfg.Units) > 0 {
			require.NoError(t, c.ObserveCost(s[0], s[1], []int64{s[2]}))
		} else {
			require.NoError(t, c.Observe(s[0], s[1]))
		}
	}
	return c.Report()
}

// sameListing checks that listed keeps the max worst groups of all, in
// order, and sums up the others.
func sameListing(t *testing.T, all, listed *report.Result, max int, msg string) {
	n := min(max, len(all.Groups))
	require.Len(t, listed.Groups, n, msg)
	for i := range n {
		assert.Equal(t, all.Groups[i].Key, listed.Groups[i].Key, "%s: listed key %d", msg, i)
	}
	assert.Equal(t, all.Keys(), listed.Keys(), msg)
	assert.Equal(t, all.Violations(), listed.Violations(), msg)
	assert.Equal(t, all.Sends, listed.Sends, msg)
	assert.Equal(t, [2]int64{all.First, all.Last}, [2]int64{listed.First, listed.Last}, msg)
	for i := range all.Totals {
		a, l := all.Totals[i], listed.Totals[i]
		assert.Equal(t, [3]int64{a.Violations, int64(a.Groups), a.MaxInWindow}, [3]int64{l.Violations, int64(l.Groups), l.MaxInWindow}, "%s: rule %d totals", msg, i)
		if a.First != nil {
			require.NotNil(t, l.First, msg)
			assert.Equal(t, a.First.Send, l.First.Send, "%s: rule %d first violation", msg, i)
		}
	}
	if len(all.Groups) > max {
		require.NotNil(t, listed.Unlisted, msg)
		assert.Equal(t, len(all.Groups)-max, listed.Unlisted.Keys, msg)
	}
}

// TestMemoryCeiling: a check per key whose heap nears its ceiling ends
// with a *MemoryError naming the keys, whether the sends come in one run
// (all within the reorder horizon) or in many.
func TestMemoryCeiling(t *testing.T) {
	for _, disorder := range []time.Duration{0, time.Hour} {
		var b strings.Builder
		b.WriteString("ts_ns,key\n")
		for i := range 3 * sweepEvery {
			fmt.Fprintf(&b, "%d,k%d\n", 1e18+int64(i)*1e6, i)
		}
		_, err := Run([]Input{{Name: "m.csv", R: strings.NewReader(b.String())}}, Config{
			Rules: []rule.Rule{{Limit: 1, Window: time.Second}}, Read: sendlog.Options{KeyCol: "key"},
			MaxDisorder: disorder, MaxMemory: 1,
		})
		var me *MemoryError
		require.ErrorAs(t, err, &me, "reorder horizon %v", disorder)
		assert.Positive(t, me.Keys)
		assert.Contains(t, err.Error(), "keys after")
	}
}

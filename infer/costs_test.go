package infer

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// TestCostCountMatchesBruteForce: each cost pass's bounds, under both
// readings, equal a direct sum of the earlier calls' costs in each call's
// window: an accepted call needs N >= S+c, a refused one is explained by
// N <= S+c-1. Costs of 0 and far above the limits are among the seeds,
// as are ties and calls exactly W apart.
func TestCostCountMatchesBruteForce(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var s []Send
		at := int64(-3 * time.Second)
		for i := range 300 {
			at += rng.Int64N(5) * int64(100*time.Millisecond)
			cost := rng.Int64N(10)
			if rng.IntN(20) == 0 {
				cost = 1000 + rng.Int64N(1000) // above any limit the others pin
			}
			s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1), Cost: []int64{cost}})
		}
		d := newSends(s)
		d.addCosts(s, []string{"tokens"})
		for _, w := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
			for _, k := range windowKinds {
				p := d.countCost(0, int64(w), k)
				r := rule.Rule{Window: w, Kind: k}
				for _, rd := range []Reading{RefusedCount, RefusedFree} {
					ref, lower := 0, 1
					for i, c := range s {
						n := bruteCost(s, i, r, rd) + c.Cost[0]
						if c.Refused {
							require.Equal(t, int(n-1), p.bound(rd, ref), "seed %d %v %v %v: refusal on line %d", seed, w, k, rd, c.Line)
							ref++
						} else {
							lower = max(lower, int(n))
						}
					}
					assert.Equal(t, lower, p.lower[rd], "seed %d %v %v %v", seed, w, k, rd)
				}
				assert.LessOrEqual(t, p.steps, int64(2*len(s)), "at most two pointer moves a call")
			}
		}
	}
}

func bruteCost(s []Send, i int, r rule.Rule, rd Reading) int64 {
	var n int64
	for j := range i {
		if (rd == RefusedCount || !s[j].Refused) && inWindow(r, s[j].At, s[i].At) {
			n += s[j].Cost[0]
		}
	}
	return n
}

// TestCostRuleEdges: a hand-made log at a window's edges, a call of cost
// above the limit and one of cost 0, read under both readings.
func TestCostRuleEdges(t *testing.T) {
	sec := int64(time.Second)
	s := []Send{
		{At: 10 * sec, Line: 2, Cost: []int64{5}},
		{At: 10 * sec, Line: 3, Cost: []int64{3}},                      // a tie: 8 units at 10s
		{At: 10*sec + sec/2, Line: 4, Refused: true, Cost: []int64{4}}, // 8 before it: explained by N <= 11
		{At: 11 * sec, Line: 5, Cost: []int64{8}},                      // exactly 1s after the first two: they left its window
		{At: 11 * sec, Line: 6, Refused: true, Cost: []int64{0}},       // cost 0 is never refused by a cost rule alone
		{At: 30 * sec, Line: 7, Refused: true, Cost: []int64{50}},      // alone in its window: explained by every N < 50
	}
	res := Infer(s, Options{Windows: []time.Duration{time.Second}, Units: []string{"tokens"}})
	find := func(k rule.Kind, rd Reading) Candidate {
		for _, c := range res.Candidates {
			if c.Unit == "tokens" && c.Kind == k && c.Reading == rd {
				return c
			}
		}
		t.Fatalf("no tokens candidate %v %v", k, rd)
		return Candidate{}
	}
	// Refused calls do not count: line 5 finds nothing before it, N >= 8.
	free := find(rule.Sliding, RefusedFree)
	assert.Equal(t, 8, free.AtLeast)
	assert.Equal(t, 2, free.Explains, "lines 4 and 7, not the call of cost 0")
	// Refused calls count: line 5 finds line 4's 4 units, N >= 12, and
	// line 4 (explained only by N <= 11) is no longer explained.
	all := find(rule.Sliding, RefusedCount)
	assert.Equal(t, 12, all.AtLeast)
	assert.Equal(t, 1, all.Explains, "only line 7")
	// Fixed 1s windows: lines 2-4 share [10s, 11s), lines 5-6 [11s, 12s),
	// so line 4's units never reach line 5 and it stays explained.
	fixed := find(rule.Fixed, RefusedCount)
	assert.Equal(t, 8, fixed.AtLeast)
	assert.Equal(t, 2, fixed.Explains, "lines 4 and 7")
	assert.Equal(t, 8, find(rule.Fixed, RefusedFree).AtLeast)
}

// TestRecoversHiddenCostContract replays hidden contracts of call and
// token rules (one to three, at least one on tokens; sliding or fixed)
// under both readings, with costs from 0 to twice their mean, and infers
// them back. Recovered: every hidden rule that refused calls alone is
// found, window, kind and unit, its true N in the reported range, the
// range at most 10% wide, and no other rule.
func TestRecoversHiddenCostContract(t *testing.T) {
	t.Parallel()
	seeds := infertest.Seeds(12, 100)
	recovered, trials := 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 11))
		hidden, pace, mean := infertest.CostContract(rng)
		refusedCount := seed%2 == 0
		p := infertest.NewProvider(hidden, refusedCount)
		ms := infertest.Traffic(rng, pace, 3000)
		var log []Send
		for i, c := range infertest.ReplayCosts(p, ms, infertest.Costs(rng, len(ms), mean)) {
			log = append(log, Send{At: c.At, Refused: c.Refused, Line: int64(i + 2), Cost: []int64{c.Cost}})
		}
		res := Infer(log, Options{Units: []string{infertest.Tokens}})
		rd := RefusedFree
		if refusedCount {
			rd = RefusedCount
		}
		f := res.Fits[rd]
		name := fmt.Sprintf("seed %d: %v, %v", seed, hidden, rd)
		require.True(t, f.Fits, "%s: the true reading must fit; unexplained %v", name, f.Unexplained)
		exercised := exercisedRules(p, hidden)
		if len(exercised) == 0 {
			continue
		}
		trials++
		if ok, why := recoveredAll(f.Rules, exercised); ok {
			recovered++
		} else {
			t.Logf("%s: inferred %v: %s", name, rulesOf(f.Rules), why)
		}
	}
	rate := float64(recovered) / float64(trials)
	t.Logf("recovered %d of %d hidden cost contracts that refused calls (%.0f%%)", recovered, trials, 100*rate)
	assert.Greater(t, trials, seeds/2, "most contracts refuse calls")
	if infertest.Full() {
		assert.GreaterOrEqual(t, rate, 0.95, "recovery rate")
	}
}

// recoveredAll reports whether the rules found are the hidden ones, each
// true N in a range at most 10% wide, and if not, why.
func recoveredAll(got []Rule, want []rule.Rule) (bool, string) {
	if len(got) != len(want) {
		return false, fmt.Sprintf("%d rules for %d", len(got), len(want))
	}
	for _, h := range want {
		var r *Rule
		for i := range got {
			if got[i].Window == h.Window && got[i].Kind == h.Kind && got[i].Unit == h.Unit {
				r = &got[i]
			}
		}
		switch {
		case r == nil:
			return false, fmt.Sprintf("%v not found", h)
		case h.Limit < r.Min || r.Max == 0 || h.Limit > r.Max:
			return false, fmt.Sprintf("%v outside [%d, %d]", h, r.Min, r.Max)
		case 10*(r.Max-r.Min) > r.Max:
			return false, fmt.Sprintf("%v: [%d, %d] is more than 10%% wide", h, r.Min, r.Max)
		}
	}
	return true, ""
}

// TestReadCosts: Read reads each call's cost per unit and refuses a log
// whose costs sum past int64, naming the line.
func TestReadCosts(t *testing.T) {
	read := func(text string) (*Log, error) {
		open := func() (io.Reader, error) { return strings.NewReader(text), nil }
		opt := ReadOptions{Log: sendlog.Options{Unit: sendlog.UnitMillis, Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tok", Field: "tok"}}}}
		return Read("calls.csv", open, opt)
	}
	log, err := read("ts,status,tok\n1000,200,7\n1001,429,0\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"tokens"}, log.Units)
	assert.Equal(t, [][]int64{{7}, {0}}, [][]int64{log.Sends[""][0].Cost, log.Sends[""][1].Cost})
	big := "ts,status,tok\n" + strings.Repeat("1000,200,999999999999999999\n", 9) + "1001,429,999999999999999999\n"
	_, err = read(big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "calls.csv:11")
	assert.Contains(t, err.Error(), "tokens costs sum past")
	_, err = read("ts,status,tok\n1000,200,-1\n")
	require.Error(t, err, "a negative cost is bad input")
}

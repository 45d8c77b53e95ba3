package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// smallContract draws one to three rules, sliding, fixed or bucket, on
// short windows with small limits.
func smallContract(rng *rand.Rand) []rule.Rule {
	var out []rule.Rule
	windows := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}
	for range 1 + rng.IntN(3) {
		r := rule.Rule{Limit: 1 + rng.IntN(6), Window: windows[rng.IntN(len(windows))]}
		switch rng.IntN(3) {
		case 1:
			r.Kind = rule.Fixed
		case 2:
			r.Kind, r.Burst = rule.Bucket, 1+rng.IntN(6)
		}
		out = append(out, r)
	}
	return out
}

// smallLog replays a few dozen calls through hidden under rd.
func smallLog(rng *rand.Rand, hidden []rule.Rule, rd Reading) []Send {
	p := infertest.NewProvider(hidden, rd == RefusedCount)
	var s []Send
	at := int64(1_700_000_000_000) * int64(time.Millisecond)
	for i := range 20 + rng.IntN(40) {
		at += int64(rng.IntN(3)*rng.IntN(700)) * int64(time.Millisecond)
		s = append(s, Send{At: at, Refused: p.Call(at), Line: int64(i + 2)})
	}
	return s
}

// bruteLeast is the least N of a window rule that keeps every accepted
// call of s under rd: one more than the most calls counted before an
// accepted call in its window, by a scan over every earlier call.
func bruteLeast(s []Send, w time.Duration, k rule.Kind, rd Reading) int {
	least := 1
	for i, c := range s {
		if c.Refused {
			continue
		}
		n := 0
		for _, e := range s[:i] {
			if (rd == RefusedCount || !e.Refused) && infertest.InWindow(rule.Rule{Window: w, Kind: k}, e.At, c.At) {
				n++
			}
		}
		least = max(least, n+1)
	}
	return least
}

// oneRuleExplains reports whether a single rule explains the whole log:
// a window of the grid at its least N, or a bucket on a grid of rates
// (0.05 to 10 a second, 3% apart) and bursts (1 to 16), judged by the
// oracle's replay.
func oneRuleExplains(s []Send, rd Reading) (string, bool) {
	for _, w := range windowGrid {
		for _, k := range windowKinds {
			r := Rule{Window: w, Kind: k, Min: bruteLeast(s, w, k, rd)}
			if explainsAll([]Rule{r}, rd, s, nil) {
				return r.Rule().String(), true
			}
		}
	}
	all := func(int) bool { return true }
	for q := int64(86400 / 20); q <= 10*86400; q = q*103/100 + 1 {
		for b := int64(1); b <= 16; b++ {
			if oracleFits(s, q, b, rd, all) {
				return (Rule{Kind: rule.Bucket, Window: 24 * time.Hour, Rate: int(q), Burst: int(b)}).Rule().String(), true
			}
		}
	}
	return "", false
}

// TestSmallestIsProvedAndNoRuleRedundant: over random hidden contracts of
// one to three sliding, fixed and bucket rules, replayed under either
// reading, every fit that holds under a reading has no redundant rule
// (without any one of them, the exact checker finds a call unexplained or
// an accepted call broken), and where a fit of two rules or more is
// called the smallest, no single rule (every window of the grid, buckets
// on a fine grid of rates and bursts) explains the log; a fit of three
// rules or more is never called the smallest (two buckets are not
// searched at every rate).
func TestSmallestIsProvedAndNoRuleRedundant(t *testing.T) {
	var claimed, checked int
	defer func() {
		t.Logf("%d fits of two rules called the smallest, checked against every single rule; %d fits checked for redundancy", claimed, checked)
		assert.Positive(t, claimed)
	}()
	for seed := range uint64(infertest.Seeds(100, 1000)) {
		rng := rand.New(rand.NewPCG(seed, 53))
		hidden := smallContract(rng)
		rd := Reading(rng.IntN(2))
		s := smallLog(rng, hidden, rd)
		res := Infer(s, Options{})
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			f := res.Fits[rd]
			if !f.Holds() || len(f.Rules) == 0 {
				continue
			}
			checked++
			for k := range f.Rules {
				if len(f.Rules) == 1 {
					break
				}
				rest := append(append([]Rule{}, f.Rules[:k]...), f.Rules[k+1:]...)
				require.False(t, explainsAll(rest, rd, s, nil), "seed %d %v: %s is redundant in %s (hidden %v)",
					seed, rd, f.Rules[k].Rule(), RulesText(f.Rules), hidden)
			}
			if !f.Smallest {
				assert.NotEmpty(t, f.Unproved, "seed %d %v: why not the smallest", seed, rd)
				continue
			}
			require.Less(t, len(f.Rules), 3, "seed %d %v: %s called the smallest", seed, rd, RulesText(f.Rules))
			if len(f.Rules) == 2 {
				claimed++
				one, ok := oneRuleExplains(s, rd)
				require.False(t, ok, "seed %d %v: %s called the smallest, but %s alone explains the log (hidden %v)",
					seed, rd, RulesText(f.Rules), one, hidden)
			}
		}
	}
}

package infer

import (
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// oracleBuckets is a plain replay of buckets (units a day and burst
// each, on calls or on tokens) over the calls, the levels exact
// fractions, written apart from infer's search: they fit when every
// accepted call finds room in each bucket and every refusal finds none
// in some bucket. An accepted call takes from every bucket; under
// RefusedCount a refusal takes from each bucket that had room for it.
func oracleBuckets(s []Send, rules []Rule, rd Reading) bool {
	levels := make([]*big.Rat, len(rules))
	for k, r := range rules {
		levels[k] = big.NewRat(int64(r.Burst), 1)
	}
	for i, c := range s {
		room := make([]bool, len(rules))
		any := false
		for k, r := range rules {
			full := big.NewRat(int64(r.Burst), 1)
			if i > 0 {
				levels[k].Add(levels[k], big.NewRat(r.perDay*(c.At-s[i-1].At)/int64(time.Millisecond), int64(day/uint64(time.Millisecond))))
				if levels[k].Cmp(full) > 0 {
					levels[k].Set(full)
				}
			}
			room[k] = levels[k].Cmp(bucketTake(c, r)) >= 0
			any = any || !room[k]
		}
		if any != c.Refused {
			return false
		}
		for k, r := range rules {
			if room[k] && (!c.Refused || rd == RefusedCount) {
				levels[k].Sub(levels[k], bucketTake(c, r))
			}
		}
	}
	return true
}

// bucketTake is what call c takes from bucket r.
func bucketTake(c Send, r Rule) *big.Rat {
	if r.Unit != "" {
		return big.NewRat(c.Cost[0], 1)
	}
	return big.NewRat(1, 1)
}

// TestEveryFitReplays: over small logs of two hidden buckets (on calls
// and on tokens) and of a bucket beside a window or alone (both
// readings), every fit infer reports of buckets alone, under either
// reading, is replayed by the oracle at the rate and burst each rule
// names: each accepted call finds room, each refusal none. The point
// named lies inside the rule's ranges, and the rules as named leave no
// refusal unexplained (a bucket bounded from outside names a point that
// fits). The log of seed (11, 59), where two buckets at one rate were
// once taken for one, is among them.
func TestEveryFitReplays(t *testing.T) {
	var replayed, outer int
	defer func() {
		t.Logf("%d fits of buckets replayed, %d with a bucket bounded from outside", replayed, outer)
		assert.Greater(t, replayed, 20, "the logs give fits of buckets")
		assert.Positive(t, outer, "some fits have a bucket bounded from outside")
	}()
	logs := []func(seed uint64) []Send{
		func(seed uint64) []Send { return twoBucketLog(rand.New(rand.NewPCG(seed, 59)), seed%2 == 1) },
		func(seed uint64) []Send {
			rng := rand.New(rand.NewPCG(seed, 61))
			return regionLog(rng, Reading(rng.IntN(2)), seed%3 == 1)
		},
	}
	for kind, log := range logs {
		for seed := range uint64(infertest.Seeds(30, 200)) {
			s := log(seed)
			unit := ""
			var opt Options
			if s[0].Cost != nil {
				unit, opt.Units = infertest.Tokens, []string{infertest.Tokens}
			}
			res := Infer(s, opt)
			for _, f := range res.Fits {
				if !f.Fits || len(f.Rules) == 0 || !bucketsOf(f.Rules, unit) {
					continue
				}
				require.Zero(t, f.Missed, "log %d seed %d %v: %s leave refusals unexplained, the first on line %d", kind, seed, f.Reading, RulesText(f.Rules), f.MissedLine)
				if f.Broken > 0 {
					continue
				}
				replayed++
				for _, r := range f.Rules {
					if r.Outer {
						outer++
						break
					}
				}
				assert.True(t, oracleBuckets(s, f.Rules, f.Reading), "log %d seed %d %v: %s does not replay the log", kind, seed, f.Reading, RulesText(f.Rules))
				for _, r := range f.Rules {
					assert.True(t, r.RateMin <= r.perDay && (r.RateOpen || r.perDay <= r.RateMax) && r.Min <= r.Burst && (r.Max == 0 || r.Burst <= r.Max),
						"log %d seed %d: %s named outside its ranges", kind, seed, r.Rule())
				}
			}
		}
	}
}

// TestTwoBucketsAtOneRate: the log of seed (11, 59) is explained by two
// buckets at one rate, bursts 2 and 46; no bucket explains it alone (a
// refused call costs at most 3, and the first comes 46 ms after one call
// of 1: any burst of 3 or more has room for it, and at bursts 1 and 2 no
// rate does, by the oracle: where every refusal is explained none takes
// from the bucket, so the rates that keep the accepted calls start at
// the least, and the refusals find the least room there). infer reports the two, not one that leaves a
// refusal unexplained.
func TestTwoBucketsAtOneRate(t *testing.T) {
	s := twoBucketLog(rand.New(rand.NewPCG(11, 59)), true)
	for b := int64(1); b <= 2; b++ {
		accepted := func(q int64) bool { return oracleFits(s, q, b, RefusedFree, func(int) bool { return false }) }
		lo, hi := int64(0), int64(1)<<40
		if !accepted(hi) {
			continue // no rate keeps the accepted calls
		}
		for hi-lo > 1 {
			if m := (lo + hi) / 2; accepted(m) {
				hi = m
			} else {
				lo = m
			}
		}
		// Every refusal a target takes nothing: the rates that fit burst
		// b start at hi, and none of the targets finds room there.
		assert.False(t, oracleFits(s, hi, b, RefusedCount, func(int) bool { return true }), "burst %d at %d a day", b, hi)
	}
	f := Infer(s, Options{Units: []string{infertest.Tokens}}).Fits[RefusedCount]
	require.True(t, f.Holds(), "%s fits %v broken %d missed %d line %d", RulesText(f.Rules), f.Fits, f.Broken, f.Missed, f.MissedLine)
	require.Len(t, f.Rules, 2, RulesText(f.Rules))
	assert.Equal(t, rule.Bucket, f.Rules[0].Kind)
	assert.True(t, oracleBuckets(s, f.Rules, RefusedCount), RulesText(f.Rules))
}

// TestMissedIsNoFit: a fit whose rules, as named, leave a refusal
// unexplained is reported as such in text and JSON and counts as a
// contradiction (exit status 1), never as a fit.
func TestMissedIsNoFit(t *testing.T) {
	var s []Send
	for i := range 6 {
		s = append(s, Send{At: int64(i) * int64(100*time.Millisecond), Line: int64(i + 2), Refused: i >= 4})
	}
	log := &Log{Keys: []string{""}, Sends: map[string][]Send{"": s}}
	rep := Run("x.csv", log, Options{})
	res := rep.Keys[0]
	require.True(t, res.Fits[res.Best].Holds(), "the log fits: %s", RulesText(res.Fits[res.Best].Rules))
	assert.False(t, rep.Contradicted())
	res.Fits[res.Best].Missed, res.Fits[res.Best].MissedLine = 1, 7
	assert.True(t, rep.Contradicted(), "a refusal the rules leave unexplained")
	var text, js strings.Builder
	require.NoError(t, rep.WriteText(&text, false))
	assert.Contains(t, text.String(), "leave 1 refusal unexplained, the first on line 7")
	require.NoError(t, rep.WriteJSON(&js))
	assert.Contains(t, js.String(), `"verdict": "leaves refusals unexplained"`)
	assert.Contains(t, js.String(), `"refusals_left_unexplained": 1`)
}

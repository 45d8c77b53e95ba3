package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// oracleExplained is a plain replay of a bucket of q units a day and
// burst b over the calls, the level an exact fraction: the refusals (by
// rank) it has no room for. An accepted call takes its cost, and so, under
// RefusedCount, does a refusal it has room for.
func oracleExplained(s []Send, q, b int64, rd Reading) map[int]bool {
	out := map[int]bool{}
	oracleReplay(s, q, b, func(c Send, r int, room bool) (take, ok bool) {
		if c.Refused && !room {
			out[r] = true
		}
		return room && (!c.Refused || rd == RefusedCount), true
	})
	return out
}

// twoBucketLog replays a little traffic, on a millisecond grid, through
// two hidden buckets under "refused calls count": a fast one with a small
// burst and a slow one with a larger; with tokens, both meter tokens and
// each call costs 0 to 3 of them.
func twoBucketLog(rng *rand.Rand, tokens bool) []Send {
	hidden := []rule.Rule{
		{Kind: rule.Bucket, Limit: 2 + rng.IntN(4), Window: time.Second, Burst: 1 + rng.IntN(4)},
		{Kind: rule.Bucket, Limit: 1 + rng.IntN(3), Window: time.Duration(3+rng.IntN(3)) * time.Second, Burst: 4 + rng.IntN(8)},
	}
	if tokens {
		hidden[0].Unit, hidden[1].Unit = infertest.Tokens, infertest.Tokens
	}
	return replayTraffic(rng, infertest.NewProvider(hidden, true), tokens, 30+rng.IntN(40), 3, 250)
}

// TestBucketRangesHoldEveryFitBesideTheOthers: over small logs of two
// hidden buckets served under "refused calls count", where infer reports
// buckets only, each of one unit, every (rate, burst) of a fine grid at
// which a bucket fits beside the other buckets as reported (the oracle's
// plain replay: room for every accepted call, none for a refusal the
// others leave) lies inside that bucket's reported ranges.
func TestBucketRangesHoldEveryFitBesideTheOthers(t *testing.T) {
	rates, bursts := regionGrid()
	var fits, points int
	seeds := infertest.Seeds(60, 600)
	defer func() {
		t.Logf("%d fits of buckets checked, %d grid points inside", fits, points)
		assert.Greater(t, fits, seeds/8, "the logs give fits of two buckets")
	}()
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 53))
		s := twoBucketLog(rng, seed%3 == 2)
		unit := ""
		if s[0].Cost != nil {
			unit = infertest.Tokens
		}
		var opt Options
		if unit != "" {
			opt.Units = []string{unit}
		}
		f := Infer(s, opt).Fits[RefusedCount]
		if !f.Fits || len(f.Rules) < 2 || !bucketsOf(f.Rules, unit) {
			continue
		}
		fits++
		explained := make([]map[int]bool, len(f.Rules))
		for k, r := range f.Rules {
			explained[k] = oracleExplained(s, r.perDay, int64(r.Burst), RefusedCount)
		}
		for k, r := range f.Rules {
			target := func(i int) bool {
				for j := range f.Rules {
					if j != k && explained[j][i] {
						return false
					}
				}
				return true
			}
			for _, b := range bursts {
				for _, q := range rates {
					if !oracleFits(s, q, b, RefusedCount, target) {
						continue
					}
					points++
					assert.True(t, r.RateMin <= q && (r.RateOpen || q <= r.RateMax) && r.Min <= int(b) && (r.Max == 0 || int(b) <= r.Max),
						"seed %d: %d a day burst %d fits beside the others, outside %s rate [%d, %d] burst [%d, %d]", seed, q, b, r.Rule(), r.RateMin, r.RateMax, r.Min, r.Max)
				}
			}
		}
	}
}

// bucketsOf reports whether every rule is a bucket of unit, at a rate the
// oracle's replay multiplies by a gap in int64.
func bucketsOf(rules []Rule, unit string) bool {
	for _, r := range rules {
		if r.Kind != rule.Bucket || r.Unit != unit || r.perDay > 1<<40 {
			return false
		}
	}
	return true
}

package infer

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// bruteCovers is, by trying every set of the candidates (all of them,
// none merged for explaining the same refusals), the least size of a set
// that explains the n refusals and the least (buckets, units) among the
// sets of that size; size 0 where none of up to four rules does.
func bruteCovers(n int, cands []*Candidate) (size int, least [2]int) {
	for size = 1; size <= 4; size++ {
		found := false
		var walk func(from int, cv []*Candidate)
		walk = func(from int, cv []*Candidate) {
			if len(cv) == size {
				if union(n, cv).count() < n {
					return
				}
				nb, units := 0, map[string]bool{}
				for _, c := range cv {
					nb += map[bool]int{true: 1}[c.Kind == rule.Bucket]
					units[c.Unit] = true
				}
				k := [2]int{nb, len(units)}
				if !found || slices.Compare(k[:], least[:]) < 0 {
					least, found = k, true
				}
				return
			}
			for i := from; i < len(cands); i++ {
				walk(i+1, append(cv, cands[i]))
			}
		}
		walk(0, nil)
		if found {
			return size, least
		}
	}
	return 0, least
}

// TestCoverInFewestUnits: over small logs of a bucket (beside a window or
// not) and of two buckets, on tokens of 0 to 3 a call or on calls of a
// token each or now and then none or two (where most rules on calls have
// a twin on tokens), under both
// readings, where the
// cover search is exhaustive, the cover fit picks has the least size, and
// among the covers of that size (every set of the candidates, tried by
// brute force) the fewest buckets, then the fewest units.
func TestCoverInFewestUnits(t *testing.T) {
	var checked, mixed int
	for seed := range uint64(infertest.Seeds(40, 300)) {
		rng := rand.New(rand.NewPCG(seed, 71))
		s := twoBucketLog(rng, seed%4 < 2)
		if seed%2 == 1 {
			s = regionLog(rng, Reading(seed/2%2), seed%4 < 2)
		}
		for i := range s {
			if s[i].Cost == nil {
				// A token a call, now and then none or two: most rules
				// on calls have a twin on tokens, some not.
				s[i].Cost = []int64{[]int64{1, 1, 1, 1, 1, 1, 0, 2}[rng.IntN(8)]}
			}
		}
		opt := Options{Units: []string{infertest.Tokens}}
		res := Infer(s, opt)
		d := newSends(s)
		d.addCosts(s, opt.Units)
		n := len(d.refIdx)
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			var cands []*Candidate
			for _, cs := range [][]Candidate{res.Candidates, res.Buckets} {
				for i := range cs {
					if cs[i].Reading == rd && cs[i].Explains > 0 {
						cands = append(cands, &cs[i])
					}
				}
			}
			if n == 0 || union(n, cands).count() < n || exhaustive(n, distinct(cands)) == nil {
				continue
			}
			size, least := bruteCovers(n, cands)
			require.Positive(t, size, "seed %d", seed)
			f := fit(d, cands, rd)
			nb, units := 0, map[string]bool{}
			for _, r := range f.Rules {
				nb += map[bool]int{true: 1}[r.Kind == rule.Bucket]
				units[r.Unit] = true
			}
			assert.Len(t, f.Rules, size, "seed %d, %v", seed, rd)
			assert.Equal(t, least, [2]int{nb, len(units)}, "seed %d, %v: found %s", seed, rd, RulesText(f.Rules))
			checked++
			if len(units) == 1 && slices.ContainsFunc(cands, func(c *Candidate) bool { return !units[c.Unit] }) {
				mixed++
			}
		}
	}
	t.Logf("%d covers checked, %d in one unit among candidates of both", checked, mixed)
	assert.Positive(t, mixed, "some logs have candidates of both units")
}

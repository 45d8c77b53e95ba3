package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFreeCandidateHoldsEveryRefusal: a bucket paired on what it
// explains with no refusal taking from it (freeCandidate) holds in its
// set every refusal some arrivals within the spread make it refuse while
// it keeps every accepted call and no refused call takes from it (a
// brute force over a grid of arrivals, ties and equal logged instants
// among them): the set may be wider than the refusals it explains,
// never narrower.
func TestFreeCandidateHoldsEveryRefusal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	sp, step, rates := smallSpread()
	checked := 0
	for range 150 {
		s, d := smallSpreadLog(rng)
		n := len(d.refIdx)
		if n == 0 {
			continue
		}
		for _, q := range rates {
			for b := int64(1); b <= 4; b++ {
				c := d.freeCandidate(-1, uint64(q), b, sp, 0)
				for r := range n {
					target := make([]bool, n)
					target[r] = true
					if !someArrivalsFitTarget(d.at, d.refused, target, sp, step, q, b) {
						continue
					}
					checked++
					assert.True(t, c.set.has(r), "log %v: bucket %d/day burst %d refuses refusal %d, outside its set", s, q, b, r)
				}
			}
		}
	}
	assert.Greater(t, checked, 100, "the brute force found few refusals a bucket explains")
}

package infer

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSpreadBurstsVisitsEachOnce: over extents of every width up to 300
// and some wide ones, spreadBursts visits each burst of the extent once,
// the most first; within the first visits, no gap between bursts visited
// (or the extent's ends) is more than twice as wide as needed to cover
// the extent at that count; and it stops at the first visit that says so.
func TestSpreadBurstsVisitsEachOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for k := range 400 {
		lo := rng.Int64N(1000)
		hi := lo + int64(k%300)
		if k >= 300 {
			hi = lo + rng.Int64N(5000)
		}
		seen := map[int64]int{}
		var order []int64
		spreadBursts(lo, hi, func(b int64) bool {
			seen[b]++
			order = append(order, b)
			return true
		})
		require.Len(t, order, int(hi-lo+1), "[%d,%d]", lo, hi)
		assert.Equal(t, hi, order[0])
		for b := lo; b <= hi; b++ {
			assert.Equal(t, 1, seen[b], "[%d,%d]: burst %d", lo, hi, b)
		}
		// After the first m visits, every burst of the extent is within
		// 2*(hi-lo+1)/m of one visited (the strides halve).
		for _, m := range []int{1, 2, 4, 8, 16, 64} {
			if m > len(order) {
				break
			}
			worst := int64(0)
			for b := lo; b <= hi; b++ {
				near := hi - lo + 1
				for _, v := range order[:m] {
					near = min(near, max(v-b, b-v))
				}
				worst = max(worst, near)
			}
			assert.LessOrEqual(t, worst, 2*(hi-lo+1)/int64(m)+1, "[%d,%d], %d visits", lo, hi, m)
		}
		var stopped int
		spreadBursts(lo, hi, func(int64) bool { stopped++; return stopped < 3 })
		assert.Equal(t, min(3, int(hi-lo+1)), stopped)
	}
	spreadBursts(5, 4, func(int64) bool { t.Fatal("an empty extent is visited"); return false })
}

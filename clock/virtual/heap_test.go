package virtual

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
)

// TestHeapOrderMatchesSorting drives the event heap with random schedules,
// moves and pops, and checks every pop against a brute-force scan of the
// events each caller has pending: the first by (at, seq), each caller at
// most once, and every caller's position kept right.
func TestHeapOrderMatchesSorting(t *testing.T) {
	for seed := range testrun.Seeds[uint64](60, 200) {
		rng := rand.New(rand.NewPCG(seed, 1))
		procs := make([]*proc, 1+rng.IntN(40))
		for i := range procs {
			procs[i] = &proc{hidx: -1, idx: i}
		}
		pending := map[*proc]event{}
		var h evHeap
		var seq uint64
		for range 2000 {
			if rng.IntN(3) > 0 || len(h) == 0 {
				p := procs[rng.IntN(len(procs))]
				seq++
				// Few distinct instants, so ties on at are common.
				ev := event{at: int64(rng.IntN(20)), seq: seq, p: p}
				h.set(ev)
				pending[p] = ev
			} else {
				got := h.pop()
				var want event
				first := true
				for _, ev := range pending {
					if first || ev.before(want) {
						want, first = ev, false
					}
				}
				require.Equal(t, want, got, "seed %d: pop", seed)
				require.Equal(t, -1, got.p.hidx, "seed %d: popped caller still has a position", seed)
				delete(pending, got.p)
			}
			require.Len(t, h, len(pending), "seed %d: events in the heap vs pending", seed)
			for i, ev := range h {
				require.Equal(t, i, ev.p.hidx, "seed %d: position the caller at %d holds", seed, i)
				require.False(t, i > 0 && ev.before(h[(i-1)/4]), "seed %d: heap order broken at %d", seed, i)
			}
		}
		// Drain: what is left comes out sorted.
		var rest []event
		for len(h) > 0 {
			rest = append(rest, h.pop())
		}
		require.True(t, slices.IsSortedFunc(rest, func(a, b event) int {
			if a.before(b) {
				return -1
			}
			return 1
		}), "seed %d: drained events out of order", seed)
	}
}

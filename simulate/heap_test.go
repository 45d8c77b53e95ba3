package simulate

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHeapOrderMatchesSorting drives the event heap with random schedules,
// moves and pops, and checks every pop against a brute-force scan of the
// events each caller has pending: the first by (at, seq), each caller at
// most once, and every caller's position kept right.
func TestHeapOrderMatchesSorting(t *testing.T) {
	for seed := range uint64(200) {
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
				if got != want {
					t.Fatalf("seed %d: pop gave %+v, want %+v", seed, got, want)
				}
				if got.p.hidx != -1 {
					t.Fatalf("seed %d: popped caller still has position %d", seed, got.p.hidx)
				}
				delete(pending, got.p)
			}
			if len(h) != len(pending) {
				t.Fatalf("seed %d: %d events in the heap, %d pending", seed, len(h), len(pending))
			}
			for i, ev := range h {
				if ev.p.hidx != i {
					t.Fatalf("seed %d: caller at %d thinks it is at %d", seed, i, ev.p.hidx)
				}
				if i > 0 && ev.before(h[(i-1)/4]) {
					t.Fatalf("seed %d: heap order broken at %d", seed, i)
				}
			}
		}
		// Drain: what is left comes out sorted.
		var rest []event
		for len(h) > 0 {
			rest = append(rest, h.pop())
		}
		if !slices.IsSortedFunc(rest, func(a, b event) int {
			if a.before(b) {
				return -1
			}
			return 1
		}) {
			t.Fatalf("seed %d: drained events out of order", seed)
		}
	}
}

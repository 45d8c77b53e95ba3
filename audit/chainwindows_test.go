package audit

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// windowsRun is a brute-force run of chained fixed windows, written apart
// from chainWindowsWorst: callers arrive at times, ask limiter 0, 1, ... in
// turn at the instant the previous one admitted them, and a refused caller
// asks again at its window's end (aligned to 0) or, with firstHit, every
// per/n (a window opening at the first call after the previous closed).
// Every ask counts in its window. It returns the send instants, in order.
func windowsRun(ns, pers []int64, firstHit bool, times []int64) []int64 {
	var q []askAt
	for i, t := range times {
		q = append(q, askAt{at: t, seq: int64(i), caller: i})
	}
	pos := make([]int, len(times))
	count := map[[2]int64]int64{}
	start := make([]int64, len(ns))
	for k := range start {
		start[k] = -1 << 62
	}
	seq := int64(len(times))
	var sends []int64
	for len(q) > 0 {
		a := popFirst(&q)
		for pos[a.caller] < len(ns) {
			k := pos[a.caller]
			win := a.at / pers[k]
			if firstHit {
				if a.at-start[k] >= pers[k] {
					start[k] = a.at
					count[[2]int64{int64(k), 0}] = 0
				}
				win = 0
			}
			key := [2]int64{int64(k), win}
			count[key]++
			if count[key] > ns[k] {
				next := (win + 1) * pers[k]
				if firstHit {
					next = a.at + max(pers[k]/ns[k], 1)
				}
				q = append(q, askAt{at: next, seq: seq, caller: a.caller})
				seq++
				break
			}
			pos[a.caller]++
		}
		if pos[a.caller] == len(ns) {
			pos[a.caller]++
			sends = append(sends, a.at)
		}
	}
	return sends
}

type askAt struct {
	at, seq int64
	caller  int
}

// popFirst removes and returns the earliest ask of q, the first queued
// among equal instants (a linear scan: the runs are small).
func popFirst(q *[]askAt) askAt {
	i := 0
	for j, a := range *q {
		if a.at < (*q)[i].at || (a.at == (*q)[i].at && a.seq < (*q)[i].seq) {
			i = j
		}
	}
	a := (*q)[i]
	*q = slices.Delete(*q, i, i+1)
	return a
}

// mostIn is the most of sorted times in one half-open window of w.
func mostIn(ts []int64, w int64) int64 {
	var best, lo int64
	for hi := range ts {
		for ts[hi]-ts[lo] >= w {
			lo++
		}
		best = max(best, int64(hi)-lo+1)
	}
	return best
}

// TestChainWindowsWorstBruteForce: over random small chains of fixed
// windows, aligned and opened by their first call, and random arrivals,
// no window of any length holds more sends than chainWindowsWorst; where
// the proof says the bound is N of the last limiter and the earlier ones
// let 2N+1 calls through within its window, the edge crowd reaches it.
func TestChainWindowsWorstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	reached := 0
	chains := testrun.Seeds(80, 600)
	for c := range chains {
		firstHit := c%2 == 1
		L := 2 + rng.IntN(2)
		ns, pers := make([]int64, L), make([]int64, L)
		ws := make([]windowLimiter, L)
		for k := range L {
			ns[k], pers[k] = 1+rng.Int64N(4), 2+rng.Int64N(30)
			if k == L-1 && c%3 != 0 {
				pers[k] = 30 + rng.Int64N(90) // long enough for a crowd to gather
			}
			ws[k] = windowLimiter{n: ns[k], per: time.Duration(pers[k])}
			if firstHit {
				ws[k].retry = time.Duration(max(pers[k]/ns[k], 1))
			}
		}
		bound := func(w int64) int64 { return chainWindowsWorst(ws, time.Duration(w), 0) }
		for range 20 {
			var times []int64
			for range 1 + rng.IntN(6) {
				at, n := rng.Int64N(4*pers[L-1]), 1+rng.IntN(8)
				every := rng.Int64N(4)
				for i := range n {
					times = append(times, at+int64(i)*every)
				}
			}
			slices.Sort(times)
			sends := windowsRun(ns, pers, firstHit, times)
			require.Len(t, sends, len(times), "every caller is sent")
			for w := int64(1); w <= 2*pers[L-1]; w++ {
				require.LessOrEqual(t, mostIn(sends, w), bound(w), "chain %v per %v firstHit %v, window %d, arrivals %v", ns, pers, firstHit, w, times)
			}
		}
		// The edge crowd: 2N+1 calls at the earlier limiters' pace, the
		// last of them before the last limiter's first window closes.
		nl, pl := ns[L-1], pers[L-1]
		var pace int64 = 1
		for k := range L - 1 {
			pace = max(pace, (pers[k]+ns[k]-1)/ns[k])
		}
		if 2*nl*pace >= pl {
			continue
		}
		times := []int64{0}
		for i := range 2 * nl {
			times = append(times, pl-1-(2*nl-1-i)*pace)
		}
		sends := windowsRun(ns, pers, firstHit, times)
		for w := int64(1); w < pl; w++ {
			if firstHit && w <= int64(ws[L-1].retry) {
				continue // the crowd goes over one retry spacing
			}
			if chainWindowsWorst(ws[:L-1], time.Duration(w), 0) <= nl {
				require.Equal(t, nl, bound(w), "the bound is N of the last limiter")
				assert.Equal(t, nl, mostIn(sends, w), "reached: chain %v per %v firstHit %v window %d", ns, pers, firstHit, w)
				reached++
			}
		}
	}
	assert.Greater(t, reached, chains/4, "cases where the bound is reached")
	t.Logf("%d chains, the bound reached in %d windows", chains, reached)
}

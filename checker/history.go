package checker

import (
	"math"
	"math/bits"
	"sync"
)

// history keeps a stream's most recent sends, one history shared by every
// rule, addressed by the send's index in the stream: send j sits in slot
// j & mask. It starts small and doubles, before a send some rule still
// needs would be overwritten, until it holds need sends; so its memory
// follows the sends actually seen and the fullest window among them, never
// a limit.
type history struct {
	at, ref []int64 // apart, so that deciding a send loads times only
	buf     *ring   // the memory of at and ref, back to ringPools on free
	mask    int64   // len(at)-1; -1 while empty
	base    int64   // the first send index stored since the last reset
	lo      int64   // no send older than lo is stored (see oldest)
	need    int64   // how many recent sends to keep: a power of two
	growAt  int64   // storing this send index must grow the history first
}

// oldest returns the index of the oldest send still stored once send idx,
// the latest, is.
func (h *history) oldest(idx int64) int64 {
	return max(h.lo, idx-h.mask)
}

// setNeed records that the rules need the last need sends kept. It keeps
// the power of two the history will grow to, so that a need growing one
// send at a time comes here once per doubling.
func (h *history) setNeed(need int64) {
	h.need = 1
	for h.need < need {
		h.need <<= 1
	}
	h.plan()
}

// plan sets growAt: the store that would overwrite the oldest stored send,
// while the history is below need; never otherwise.
func (h *history) plan() {
	if h.mask+1 >= h.need {
		h.growAt = math.MaxInt64
	} else {
		h.growAt = h.lo + h.mask + 1
	}
}

// ringPools keeps the memory of histories that grew, went idle or ended
// with Check, for the next ones: pool k holds the at and ref of 1<<k sends
// (a ring). Checking stream after stream (simulated runs, a log's keys)
// then leaves no history behind as garbage.
var ringPools [64]sync.Pool

// ring is the memory of a history's at and ref, allocated apart: as the two
// halves of one allocation (a power of two apart) the check of a 10M-line
// log took about 15% more CPU (scripts/bench-check.sh, BASE alternated).
type ring struct{ at, ref []int64 }

// poolOutgrownUpTo is the largest ring, in sends, that a growing history
// gives to ringPools. One long stream grows through rings up to a million
// sends and never takes them back; held in the pools until a collection
// they raised the peak RSS of the 10M-line check from 59-62 to 62-66 MB.
// Short-lived checkers (a simulated run's) grow within it.
const poolOutgrownUpTo = 1 << 14

// takeRing returns zeroed memory for the at and ref of n sends (a power of
// two), as make would.
func takeRing(n int64) *ring {
	if r, ok := ringPools[bits.TrailingZeros64(uint64(n))].Get().(*ring); ok {
		clear(r.at)
		clear(r.ref)
		return r
	}
	return &ring{make([]int64, n), make([]int64, n)}
}

// free gives the history's memory back to ringPools. Nothing else refers to
// it: the history hands out copies of its sends only.
func (h *history) free() {
	if h.buf != nil {
		ringPools[bits.TrailingZeros64(uint64(len(h.at)))].Put(h.buf)
	}
	h.buf, h.at, h.ref = nil, nil, nil
}

// grow doubles the history before send idx is stored (idx >= growAt).
func (h *history) grow(idx int64) {
	n := max(2*(h.mask+1), 8)
	buf := takeRing(n)
	at, ref := buf.at, buf.ref
	from := max(h.lo, idx-h.mask-1)
	// Copy [from, idx) in runs contiguous in the old history, two at most;
	// n being a multiple of its length, they are contiguous in the new.
	for j := from; j < idx; {
		s, d := j&h.mask, j&(n-1)
		k := min(idx-j, h.mask+1-s)
		copy(at[d:d+k], h.at[s:s+k])
		copy(ref[d:d+k], h.ref[s:s+k])
		j += k
	}
	if h.mask+1 <= poolOutgrownUpTo {
		h.free()
	} // else a large outgrown ring is left to the collector, see poolOutgrownUpTo
	h.at, h.ref, h.buf, h.mask, h.lo = at, ref, buf, n-1, from
	h.plan()
}

// reset forgets every stored send and frees the memory; idx is the next
// send's index.
func (h *history) reset(idx int64) {
	h.free()
	h.mask, h.base, h.lo = -1, idx, idx
	h.plan()
}

// get returns stored send j.
func (h *history) get(j int64) Send {
	return Send{At: h.at[j&h.mask], Ref: h.ref[j&h.mask]}
}

// in reports whether stored send j lies in the window of send idx: the
// window holds sends less than w before it. The difference is taken
// modulo 2^64, which is exact for sends in time order however far apart.
func (h *history) in(j, idx int64, w uint64) bool {
	return uint64(h.at[idx&h.mask]-h.at[j&h.mask]) < w
}

// windowStart returns the index of the oldest send in the window of send
// idx among the last bound stored, and whether older sends may have been in
// it too (they were dropped or lie beyond bound).
func (h *history) windowStart(idx int64, w uint64, bound int64) (int64, bool) {
	lo, hi := max(h.oldest(idx), idx-bound+1), idx
	saturated := lo > h.base && h.in(lo, idx, w)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if h.in(mid, idx, w) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, saturated
}

// last returns stored sends from..idx, oldest first, at most k of them (the
// newest).
func (h *history) last(from, idx int64, k int) []Send {
	from = max(from, idx-int64(k)+1)
	out := make([]Send, 0, idx-from+1)
	for j := from; j <= idx; j++ {
		out = append(out, h.get(j))
	}
	return out
}

package infer

import (
	"container/heap"
	"math"
	"slices"
)

// A bucket's region within a spread, found box by box. Under "refused
// calls count" a refusal another rule explains (a drain) takes from the
// bucket when it has room, and which drains had room depends on the
// bucket: the curves bound the region from outside with the drains
// certain to take counted in the need and every drain that may take in
// the deficit a target found. Over a box of rates [q1, q2] and bursts
// [b1, b2] many drains are sorted for every point of the box at once:
//
//   - a drain certainly took when even the most deficit it can have found
//     (spreadWide's bound, with the drains that may take, at q1, held to
//     b2 call by call: a bucket's deficit never passes its burst, as a
//     call it has no room for takes nothing) leaves room at b1;
//   - a drain certainly took nothing when even the least deficit it can
//     have found leaves no room at b2: the calls logged before s_r−sp
//     all arrived before it, and those certain to take left, on their
//     logged instants refilled to s_r+sp at q2, at least that deficit.
//
// With the sets sorted, the curves bound the box tighter, the box is
// clipped to them, and the drains are sorted again over what is left, as
// the exact log's boxes are (see regionFit.narrow). Each side of the
// region is then sought best first, halving the box that reaches
// furthest, until a box of one rate and one burst leads: within a spread
// such a point is not judged exactly (no one arrival per call decides a
// fit), so it bounds the side. Every point that fits lies in a box of the
// queue, so the lead's side bounds them all, and so does it where the
// budget of steps runs out first.

// spreadBox is a box of a spread's bucket region with the drains (by
// rank) certain to take from every bucket in it and those that may.
type spreadBox struct {
	box               region
	certain, possible bitset
	shrunk            bool
}

// boxNarrow narrows rg, g's region within its spread under "refused
// calls count", side by side within budget steps; rg where there is no
// drain, no bound on every side, or a side's search finds no box left
// (then no bucket fits, which the caller's own judging says).
func (g *spreadFit) boxNarrow(rg region, budget int64) region {
	if g.drain == nil || g.drain.count() == 0 || rg.Empty || rg.RateOpen || rg.BurstMax == math.MaxInt ||
		withinPart(rg, slicedWithin) || budget < narrowPasses*int64(g.d.n()) {
		return rg
	}
	var side [4]int64
	for k := range side {
		lead, ok := g.seekBox(rg, k, g.steps+budget/4)
		if !ok {
			return rg
		}
		side[k] = signed(key(lead, k), k)
	}
	out := region{RateMin: side[sideRateMin], RateMax: side[sideRateMax], BurstMin: int(side[sideBurstMin]), BurstMax: int(side[sideBurstMax]), Exact: rg.Exact}
	if out.RateMin > out.RateMax || out.BurstMin > out.BurstMax {
		return rg
	}
	return out
}

// seekBox seeks side k of rg's points that fit best first (see above)
// until a point leads the queue or the steps reach stop, and returns the
// lead; false where no box is left.
func (g *spreadFit) seekBox(rg region, k int, stop int64) (region, bool) {
	q := &spreadQueue{k: k}
	heap.Push(q, spreadBox{box: rg, certain: newBitset(len(g.d.refIdx)), possible: slices.Clone(g.drain)})
	for q.Len() > 0 {
		top := q.boxes[0]
		if top.shrunk && (g.steps >= stop || point(top.box)) {
			return top.box, true
		}
		heap.Pop(q)
		if !top.shrunk {
			if next, ok := g.shrinkBox(top, stop); ok {
				heap.Push(q, next)
			}
			continue
		}
		for _, half := range halves(top.box) {
			heap.Push(q, spreadBox{box: half, certain: top.certain, possible: top.possible})
		}
	}
	return region{}, false
}

// shrinkBox clips sb's box to the points the curves allow under its
// sorting, and sorts the drains over what is left, until the sorting
// stops or the steps reach stop; false where no point is left. At a
// point (q, b) that fits, b is at least lower(q), so lower(q2), and at
// most upper(q), so upper(q1); q is at least the least rate whose lower
// falls to b2, and at most the most whose upper reaches b1.
func (g *spreadFit) shrinkBox(sb spreadBox, stop int64) (spreadBox, bool) {
	box := sb.box
	certain, possible := slices.Clone(sb.certain), slices.Clone(sb.possible)
	for range maxSorts + 1 {
		b1, b2 := int64(box.BurstMin), int64(box.BurstMax)
		q1, q2 := uint64(box.RateMin), uint64(box.RateMax)
		lower := func(q uint64) int64 { return g.boxLower(q, certain, b2) }
		upper := func(q uint64) int64 { return g.boxUpper(q, possible, b1, b2) }
		if lower(q2) > b2 {
			return spreadBox{}, false
		}
		if lower(q1) > b2 {
			q1 = bisectRate(q1, q2, func(q uint64) bool { return lower(q) <= b2 })
		}
		u := upper(q1)
		if u < b1 {
			return spreadBox{}, false
		}
		if upper(q2) < b1 {
			q2 = bisectRate(q1, q2, func(q uint64) bool { return upper(q) < b1 }) - 1
		}
		b1, b2 = max(b1, g.boxLower(q2, certain, math.MaxInt64)), min(b2, u)
		if b1 > b2 || q1 > q2 {
			return spreadBox{}, false
		}
		box = region{RateMin: int64(q1), RateMax: int64(q2), BurstMin: int(b1), BurstMax: int(b2), Exact: box.Exact}
		if g.steps >= stop || !g.sortBox(box, certain, possible) {
			break
		}
	}
	return spreadBox{box: box, certain: certain, possible: possible, shrunk: true}, true
}

// boxLower is the least burst the accepted calls and the drains in
// certain certainly need at q (a value past limit once past it).
func (g *spreadFit) boxLower(q uint64, certain bitset, limit int64) int64 {
	g.steps += 2 * int64(g.d.n())
	return g.d.spreadNeed(g.u, q, g.sp, certain, limit)
}

// boxUpper is the most burst with possibly no room for any target at q,
// the drains in possible taking (a value below limit once below it).
func (g *spreadFit) boxUpper(q uint64, possible bitset, limit, most int64) int64 {
	g.steps += 2 * int64(g.d.n())
	return g.d.spreadUpperTo(g.u, q, g.sp, possible, nil, g.target, limit, most)
}

// spreadNeed is spreadLeastPast, the refusals in certain (by rank)
// taking as the accepted calls do.
func (d *sends) spreadNeed(u int, q uint64, sp int64, certain bitset, limit int64) int64 {
	return d.needWalk(u, q, sp, 1, limit, func(r int, _ int64) bool { return certain.has(r) })
}

// sortBox sorts the drains that may take and are not certain to over
// box (see above), in certain and possible, and reports whether it
// sorted one.
func (g *spreadFit) sortBox(box region, certain, possible bitset) bool {
	d := g.d
	wide := make([]int64, len(d.refIdx))
	d.spreadUpperTo(g.u, uint64(box.RateMin), g.sp, possible, wide, nil, math.MinInt64, int64(box.BurstMax))
	g.steps += 4 * int64(d.n())
	q2, b2 := uint64(box.RateMax), mul64(uint64(box.BurstMax), day)
	var acc u128 // the deficit the calls certain to take leave, logged before s_r−sp
	pi, pprev, moved := 0, int64(0), false
	for r, k := range d.refIdx {
		t := d.at[k]
		for ; pi < len(d.at) && d.at[pi] < t-g.sp; pi++ {
			if d.refused[pi] && !certain.has(d.rankOf(pi)) {
				continue
			}
			if d.at[pi] > pprev {
				acc = refill(acc, q2, d.at[pi]-pprev)
			}
			pprev = d.at[pi]
			acc = acc.add(mul64(uint64(d.costOf(g.u, pi)), day))
		}
		if !possible.has(r) || certain.has(r) {
			continue
		}
		switch found := refill(acc, q2, t+g.sp-pprev); {
		case wide[r] < int64(box.BurstMin):
			certain.add(r)
			moved = true
		case b2.less(found.add(mul64(uint64(d.costOf(g.u, int(k))), day))):
			possible[r/64] &^= 1 << (r % 64)
			moved = true
		}
	}
	return moved
}

// spreadQueue is a heap of boxes by how far they reach on side k.
type spreadQueue struct {
	k     int
	boxes []spreadBox
}

func (q *spreadQueue) Len() int { return len(q.boxes) }
func (q *spreadQueue) Less(i, j int) bool {
	return key(q.boxes[i].box, q.k) < key(q.boxes[j].box, q.k)
}
func (q *spreadQueue) Swap(i, j int) { q.boxes[i], q.boxes[j] = q.boxes[j], q.boxes[i] }
func (q *spreadQueue) Push(x any)    { q.boxes = append(q.boxes, x.(spreadBox)) }
func (q *spreadQueue) Pop() any {
	x := q.boxes[len(q.boxes)-1]
	q.boxes = q.boxes[:len(q.boxes)-1]
	return x
}

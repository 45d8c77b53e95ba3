package infer

import (
	"container/heap"
	"math"
	"slices"
)

// narrow narrows an extent rg bounded from outside (refusals outside the
// targets that may drain the bucket or not). A box of rates and bursts
// is shrunk (see shrink): the refusals are sorted over its corners (see
// sort) and the box is clipped to the points the curves of the drains
// certain and possible allow, until the sorting stops; what is left
// holds every point of the box that fits, each step keeping, at every
// point that fits, the true drains between the certain and the
// possible. Each side of the extent (its least and most rate, its least
// and most burst) is then sought best first (see edge): the box that
// reaches furthest on that side is shrunk, and split in halves unless it
// is fine, until a fine box leads. Every point that fits lies in a box of
// the queue, so the lead's side bounds them all, and so does it where
// the budget of steps runs out first. Where a search finds no box with
// a point left, rg is kept.
func (g *regionFit) narrow(rg region, budget int64) region {
	if !g.drain || rg.Empty || rg.Exact || rg.RateOpen || rg.BurstMax == math.MaxInt ||
		budget < narrowPasses*int64(g.d.n()) {
		return rg
	}
	certain, possible := g.certain, g.possible
	defer func() { g.certain, g.possible = certain, possible }()
	var side [4]int64
	for k := range side {
		v, ok := g.edge(rg, k, g.steps+budget/4, certain, possible)
		if !ok {
			// No box holds a point that fits: keep the outer bound,
			// whose point the caller judges exactly.
			return rg
		}
		side[k] = v
	}
	out := region{RateMin: side[sideRateMin], RateMax: side[sideRateMax], BurstMin: int(side[sideBurstMin]), BurstMax: int(side[sideBurstMax])}
	if out.RateMin > out.RateMax || out.BurstMin > out.BurstMax {
		return rg
	}
	return out
}

// narrowPasses is the least budget, in passes over the log, that narrow
// sets out with: below it the extent is kept.
const narrowPasses = 1000

// The sides of an extent, in the order narrow seeks them.
const (
	sideBurstMin = iota
	sideBurstMax
	sideRateMin
	sideRateMax
)

// key is how far box reaches on side k, less being further.
func key(box region, k int) int64 {
	return [4]int64{int64(box.BurstMin), -int64(box.BurstMax), box.RateMin, -box.RateMax}[k]
}

// edge seeks side k of the points of rg that fit, best first from the
// sorting given, until a fine box (see fine) leads the queue or the
// steps reach stop, and returns the lead's side; false where no box with
// a point is left.
func (g *regionFit) edge(rg region, k int, stop int64, certain, possible bitset) (int64, bool) {
	lead, _, ok := g.seek(rg, k, stop, certain, possible)
	return signed(key(lead, k), k), ok
}

// seek is edge's search: it returns the box that leads the queue, found
// where it is a point that fits, and false where no box with a point is
// left.
func (g *regionFit) seek(rg region, k int, stop int64, certain, possible bitset) (lead region, found, ok bool) {
	q := &boxQueue{k: k}
	heap.Push(q, sortedBox{box: rg, certain: certain, possible: possible})
	for q.Len() > 0 {
		top := q.boxes[0]
		if top.shrunk && g.steps >= stop {
			return top.box, false, true
		}
		heap.Pop(q)
		if top.shrunk && point(top.box) {
			if g.fits(uint64(top.box.RateMin), int64(top.box.BurstMin)) {
				return top.box, true, true
			}
			continue
		}
		if !top.shrunk {
			box := g.shrink(top.box, top.certain, top.possible, stop)
			if !box.Empty {
				heap.Push(q, sortedBox{box: box, certain: g.certain, possible: g.possible, shrunk: true})
			}
			continue
		}
		for _, half := range halves(top.box) {
			heap.Push(q, sortedBox{box: half, certain: top.certain, possible: top.possible})
		}
	}
	return region{}, false, false
}

// seekPoint looks for a point that fits in an extent rg bounded from
// outside, best first from its least burst and then from its most (see
// seek), within budget steps shared between them: where a region is a
// sliver, its boxes are clipped away around it far faster than a climb
// tries its bursts one by one.
func (g *regionFit) seekPoint(rg region, budget int64) (uint64, int, bool) {
	certain, possible := g.certain, g.possible
	defer func() { g.certain, g.possible = certain, possible }()
	for _, k := range []int{sideBurstMin, sideBurstMax} {
		box, found, _ := g.seek(rg, k, g.steps+budget/2, certain, possible)
		if found {
			return uint64(box.RateMin), box.BurstMin, true
		}
	}
	return 0, 0, false
}

// signed undoes key's sign on the sides sought from above.
func signed(v int64, k int) int64 {
	if k == sideBurstMax || k == sideRateMax {
		return -v
	}
	return v
}

// point: a box of one rate and one burst, which fits judges exactly.
func point(box region) bool {
	return box.BurstMin == box.BurstMax && box.RateMin == box.RateMax
}

// halves splits box in two along its wider side, the bursts where they
// span more than the rates (as parts of their least), else the rates.
func halves(box region) [2]region {
	a, b := box, box
	db, dq := float64(box.BurstMax-box.BurstMin)/float64(max(box.BurstMin, 1)), float64(box.RateMax-box.RateMin)/float64(max(box.RateMin, 1))
	if box.BurstMin < box.BurstMax && db >= dq {
		m := box.BurstMin + (box.BurstMax-box.BurstMin)/2
		a.BurstMax, b.BurstMin = m, m+1
		return [2]region{a, b}
	}
	m := box.RateMin + (box.RateMax-box.RateMin)/2
	a.RateMax, b.RateMin = m, m+1
	return [2]region{a, b}
}

// sortedBox is a box of edge's queue with the sorting it holds under;
// shrunk once shrink has clipped it.
type sortedBox struct {
	box               region
	certain, possible bitset
	shrunk            bool
}

// boxQueue is a heap of boxes by how far they reach on side k.
type boxQueue struct {
	k     int
	boxes []sortedBox
}

func (q *boxQueue) Len() int { return len(q.boxes) }
func (q *boxQueue) Less(i, j int) bool {
	return key(q.boxes[i].box, q.k) < key(q.boxes[j].box, q.k)
}
func (q *boxQueue) Swap(i, j int) { q.boxes[i], q.boxes[j] = q.boxes[j], q.boxes[i] }
func (q *boxQueue) Push(x any)    { q.boxes = append(q.boxes, x.(sortedBox)) }
func (q *boxQueue) Pop() any {
	x := q.boxes[len(q.boxes)-1]
	q.boxes = q.boxes[:len(q.boxes)-1]
	return x
}

// shrink clips box to the points the curves allow, starting from the
// sorting given (left in g, sorted further, for the box returned) and
// sorting the refusals over the box between clips, until the sorting
// stops or the steps reach stop; Empty where no point is left. At a
// point (q, b) of the box that fits, q is at least lo(b), so lo(bmax); b
// is at most upper(q), so upper(qmin); q is at most the most rate whose
// upper reaches bmin; b is at least lower(q), so lower(qmax).
func (g *regionFit) shrink(box region, certain, possible bitset, stop int64) region {
	g.certain, g.possible = slices.Clone(certain), slices.Clone(possible)
	for range maxSorts + 1 {
		b1, b2 := int64(box.BurstMin), int64(box.BurstMax)
		qlo, steps := g.d.leastRoom(g.u, b2, uint64(box.RateMin), g.certain)
		g.steps += steps
		if qlo == 0 || qlo > uint64(box.RateMax) {
			return region{Empty: true}
		}
		_, u := g.curve(qlo)
		if u < b1 {
			return region{Empty: true} // the upper curve falls with the rate
		}
		qhi := uint64(box.RateMax)
		if _, uh := g.curve(qhi); uh < b1 {
			qhi = bisectRate(qlo, qhi, func(q uint64) bool { _, u := g.curve(q); return u < b1 }) - 1
		}
		lower, _ := g.curve(qhi)
		b1, b2 = max(b1, lower), min(b2, u)
		if b1 > b2 {
			return region{Empty: true}
		}
		box = region{RateMin: int64(qlo), RateMax: int64(qhi), BurstMin: int(b1), BurstMax: int(b2)}
		if g.steps >= stop || !g.sort(box) {
			break
		}
	}
	return box
}

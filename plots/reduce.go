package plots

import "math"

// Point is one corner of a drawn step line: from At on, the line is at Count.
type Point struct {
	At    int64
	Count int64
}

// reducer thins a step series to at most four points per pixel column: the
// first and last steps (the edges the line enters and leaves by) and the
// lowest and highest, so no peak is lost however many steps share a column.
type reducer struct {
	cols pixelColumns
	col  int
	next int64 // first instant of the column after col
	// fast is next once the column has its first four steps, and before
	// that MinInt64: rise and fall take no step below it.
	fast int64
	n    int // steps seen in the current column, which orders them
	buf  [4]seqStep
	low  seqStep
	high seqStep
	// lo and hi are low's and high's counts, for rise and fall.
	lo, hi int64
	last   Point // its seq is n-1
	out    []Point
}

type seqStep struct {
	Point
	seq int
}

func newReducer(cols pixelColumns) *reducer {
	return &reducer{cols: cols, col: -1, next: math.MinInt64, fast: math.MinInt64}
}

// add takes the next step.
func (r *reducer) add(at, count int64) {
	if at >= r.next {
		r.flush()
		r.col = r.cols.of(at)
		r.next = math.MaxInt64
		if r.col+1 < r.cols.n {
			r.next = r.cols.start(r.col + 1)
		}
	}
	s := seqStep{Point{At: at, Count: count}, r.n}
	if r.n < len(r.buf) {
		r.buf[r.n] = s
	}
	if r.n == 0 || s.Count < r.low.Count {
		r.low, r.lo = s, s.Count
	}
	if r.n == 0 || s.Count > r.high.Count {
		r.high, r.hi = s, s.Count
	}
	r.last = Point{at, count}
	r.n++
	if r.n == len(r.buf) {
		r.fast = r.next
	}
}

// rise and fall take a step known to rise, or fall, from the one before,
// when it is only the last step so far: within a column past its first
// four steps, and no new extreme. They report whether they took it (else
// call add). They inline, for the sweeps of long logs (tens of millions of
// steps).
func (r *reducer) rise(at, count int64) bool {
	if at < r.fast && count <= r.hi {
		r.last = Point{at, count}
		r.n++
		return true
	}
	return false
}

func (r *reducer) fall(at, count int64) bool {
	if at < r.fast && count >= r.lo {
		r.last = Point{at, count}
		r.n++
		return true
	}
	return false
}

// flush emits the current column's kept steps in their original order.
func (r *reducer) flush() {
	r.fast = math.MinInt64
	if r.n <= len(r.buf) {
		for _, s := range r.buf[:r.n] {
			r.out = append(r.out, s.Point)
		}
		r.n = 0
		return
	}
	kept := [4]seqStep{r.buf[0], r.low, r.high, {r.last, r.n - 1}}
	for i := 1; i < len(kept); i++ {
		for j := i; j > 0 && kept[j].seq < kept[j-1].seq; j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	prev := -1
	for _, s := range kept {
		if s.seq != prev {
			r.out = append(r.out, s.Point)
			prev = s.seq
		}
	}
	r.n = 0
}

// points flushes the last column and returns the thinned series.
func (r *reducer) points() []Point {
	r.flush()
	return r.out
}

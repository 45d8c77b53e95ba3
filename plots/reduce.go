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
	n    int   // steps seen in the current column
	seq  int   // global step number, to order and de-duplicate kept steps
	buf  [4]seqStep
	low  seqStep
	high seqStep
	last seqStep
	out  []Point
}

type seqStep struct {
	Point
	seq int
}

func newReducer(cols pixelColumns) *reducer {
	return &reducer{cols: cols, col: -1}
}

func (r *reducer) add(at, count int64) {
	s := seqStep{Point{At: at, Count: count}, r.seq}
	r.seq++
	if r.col < 0 || at >= r.next {
		r.flush()
		r.col = r.cols.of(at)
		r.next = math.MaxInt64
		if r.col+1 < r.cols.n {
			r.next = r.cols.start(r.col + 1)
		}
	}
	if r.n < len(r.buf) {
		r.buf[r.n] = s
	}
	if r.n == 0 || s.Count < r.low.Count {
		r.low = s
	}
	if r.n == 0 || s.Count > r.high.Count {
		r.high = s
	}
	r.last = s
	r.n++
}

// flush emits the current column's kept steps in their original order.
func (r *reducer) flush() {
	if r.n <= len(r.buf) {
		for _, s := range r.buf[:r.n] {
			r.out = append(r.out, s.Point)
		}
		r.n = 0
		return
	}
	kept := [4]seqStep{r.buf[0], r.low, r.high, r.last}
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

package plots

import "math/bits"

// pixelColumns maps instants in [from, from+span] onto n equal columns, in
// integer arithmetic so that a series and its markers agree on every column.
type pixelColumns struct {
	from int64
	span uint64 // to - from, unsigned: it may exceed the int64 range
	n    int
}

func newPixelColumns(from, to int64, n int) pixelColumns {
	span := uint64(1)
	if to > from {
		span = uint64(to - from)
	}
	if n < 1 {
		n = 1
	}
	return pixelColumns{from: from, span: span, n: n}
}

// of returns the column of instant t, clamped to the range.
func (c pixelColumns) of(t int64) int {
	if t <= c.from {
		return 0
	}
	d := uint64(t - c.from)
	if d >= c.span {
		return c.n - 1
	}
	hi, lo := bits.Mul64(d, uint64(c.n))
	q, _ := bits.Div64(hi, lo, c.span)
	return int(q)
}

// start returns the first instant of column c (c in 1..n-1): the smallest t
// with of(t) >= c, so a sweep in time order can skip the division until t
// reaches the next column.
func (c pixelColumns) start(col int) int64 {
	hi, lo := bits.Mul64(uint64(col), c.span)
	q, rem := bits.Div64(hi, lo, uint64(c.n))
	if rem != 0 {
		q++
	}
	return c.from + int64(q)
}

package checker

import "math/bits"

// u128 is an unsigned 128-bit integer: a bucket's level multiplied by its
// window (at most Burst*Window < 2^126) stays exact in it.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// decimal writes a/d, for d > 0 and a/d < 2^64, rounded down to nine
// decimals with trailing zeros trimmed ("0.8", "3", "0.333333333").
func (a u128) decimal(d uint64) string {
	q, r := bits.Div64(a.hi, a.lo, d) // a.hi < d since a/d < 2^64
	hi, lo := bits.Mul64(r, 1e9)
	frac, _ := bits.Div64(hi, lo, d)
	s := uitoa(q)
	if frac == 0 {
		return s
	}
	f := uitoa(frac + 1e9)[1:] // nine digits, leading zeros kept
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return s + "." + f
}

func uitoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

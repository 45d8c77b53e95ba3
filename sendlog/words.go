package sendlog

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The word-at-a-time path: the common machine-written lines, read eight
// bytes at a time, with every other line left to the general path.

// agreeingDigits returns, as bits, the digit counts that read in the fixed
// unit without the general path's check (digitsAgree).
func (p *timeParser) agreeingDigits() uint32 {
	var agree uint32
	for d := range 20 {
		if p.digitsAgree(d) {
			agree |= 1 << d
		}
	}
	return agree
}

// disableFastPath lets tests compare fastLines with the general path.
var disableFastPath bool

// fastLines parses, into b, the leading lines of data that are the common
// machine-written CSV: an integer epoch in the first column, perhaps a plain
// key in the second. It stops at the first line that is anything else and
// returns the rest, from that line on, for the general path, which also
// produces every error. Every line it takes, the general path reads alike
// (FuzzFastLines holds it to that).
func (lp *lineParser) fastLines(b *batch, data []byte, withKey bool) []byte {
	scale, ok := lp.tp.fastScale()
	if !ok {
		return data
	}
	maxV := uint64(1<<63-1) / uint64(scale)
	agree := lp.tp.agreeingDigits()
	// The batch's slices are kept in locals while the loop runs.
	at, lineNo, lines := b.At, b.Line, b.lines
	var first firstWord
	for len(data) > 0 {
		var v uint64
		var n, next int
		var key []byte
		if len(data) >= 32 {
			// The common line, an epoch of 16 to 19 digits and a key of
			// up to seven bytes, read as four words with no loop: the
			// first eight digits (kept from the line before, as sorted
			// epochs change them once in 10^11 units), the next eight,
			// the rest with the comma after them, and the key.
			w1, w2 := binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
			k := bits.TrailingZeros64(nonDigits(w2)) >> 3
			if first.digits(binary.LittleEndian.Uint64(data)) && digitWord(w1) == 0 && k <= 3 {
				n = 16 + k
				// The k digits to the top of w2, zeros below them.
				v = (first.v+wordValue(w1))*pow10[k&3] + wordValue(w2<<(64-8*k)|0x3030303030303030>>(8*k))
				switch byte(w2 >> (8 * k)) {
				case '\n':
					if !withKey {
						next = n + 1
					}
				case ',':
					// A key with a NUL byte is left to the general path.
					// The key's end is looked for in w2 first, which holds
					// it after 19 digits and up to three bytes: with the
					// comma's mark off, the lowest is the first comma,
					// newline or NUL after it, or a false one just after
					// it, so that the next line's start hangs on w2 alone.
					// A quote, too, leaves the line to the general path.
					m := colEnd(w2) | nulBytes(w2) | quoteBytes(w2)
					if p := bits.TrailingZeros64(m&(m-1)) >> 3; p < 8 && byte(w2>>(8*p)) == '\n' {
						next, key = 17+p, data[n+1:16+p]
						break
					}
					w := binary.LittleEndian.Uint64(data[n+1:])
					c := bits.TrailingZeros64(colEnd(w)|nulBytes(w)|quoteBytes(w)) >> 3
					if c < 8 && data[n+1+c] == '\n' {
						next, key = n+2+c, data[n+1:n+1+c]
					}
				}
			}
		}
		if next == 0 {
			// shapeLine does not look for NUL bytes: it waits for the
			// chunk to be known to hold none.
			if !lp.nulSeen {
				break
			}
			if v, n, next, key = shapeLine(data, withKey); next == 0 {
				break
			}
		}
		if v > maxV || agree>>n&1 == 0 {
			break
		}
		if withKey && (len(key) == 0 || key[0] == '"' || key[0] == ' ' || key[len(key)-1] == ' ' || key[len(key)-1] == '\r') {
			break
		}
		lines++
		at = append(at, int64(v)*scale)
		lineNo = append(lineNo, lines)
		if withKey {
			var id int32
			if k := len(key); k <= 8 && len(data)-(n+1) >= 8 {
				// The key's bytes as one word, read with the bytes after it
				// and masked off; indexShort's common case by hand, as it
				// is too large to inline.
				w := binary.LittleEndian.Uint64(data[n+1:]) & (1<<(8*k) - 1)
				h := shortHash(w, k)
				if s := lp.keys.home(h); s.word == w && int(s.n) == k && s.id != 0 {
					id = s.id - 1
				} else {
					id = lp.keys.probeShort(&b.Batch, key, w, h)
				}
			} else {
				id = lp.keys.index(&b.Batch, key)
			}
			b.keyIdx = append(b.keyIdx, id)
		}
		data = data[next:]
	}
	b.At, b.Line, b.lines = at, lineNo, lines
	return data
}

// shapeLine reads the start of a line for fastLines: the integer epoch
// that starts it and its digit count, where the next line starts, and,
// with withKey, the second column; next is 0 when the line is anything
// else than digits, then a newline (without withKey), or a comma and a
// second column that holds no quote and, with a third, a newline after.
func shapeLine(data []byte, withKey bool) (v uint64, n, next int, key []byte) {
	v, n = leadingDigits(data)
	if n == 0 || n > 19 || n >= len(data) {
		return 0, 0, 0, nil
	}
	switch data[n] {
	case '\n':
		if withKey {
			return 0, 0, 0, nil
		}
		return v, n, n + 1, nil
	case ',':
		rest := data[n+1:]
		// Keys are short: the second column's end is looked for in its
		// first eight bytes as one word, then by a plain loop, which
		// beats IndexByte's call; only a third column needs a search for
		// the line's end.
		c, inWord := 0, false
		if len(rest) >= 8 {
			w := binary.LittleEndian.Uint64(rest)
			if e := colEnd(w) | quoteBytes(w); e != 0 {
				c, inWord = bits.TrailingZeros64(e)>>3, true
			}
		}
		for !inWord && c < len(rest) && rest[c] != '\n' && rest[c] != ',' && rest[c] != '"' && c <= MaxLine {
			c++
		}
		nl := c
		if c < len(rest) && rest[c] == '"' {
			return 0, 0, 0, nil // quoting is the general path's
		}
		if c < len(rest) && rest[c] == ',' {
			i := bytes.IndexByte(rest[c:], '\n')
			if i < 0 || bytes.IndexByte(rest[c:c+i], '"') >= 0 {
				return 0, 0, 0, nil
			}
			nl += i
		}
		if nl == len(rest) || nl > MaxLine {
			return 0, 0, 0, nil
		}
		return v, n, n + 1 + nl + 1, rest[:c]
	}
	return 0, 0, 0, nil
}

// firstWord keeps the first eight digits of the last line's epoch for
// fastLines. The zero value is ready to use.
type firstWord struct {
	w uint64 // the word, less "00000000", so that the zero value stands for it
	v uint64 // its digits' value, times 10^8
}

// digits reports whether w, a line's first eight bytes, is eight digits,
// and keeps their value in f.v.
func (f *firstWord) digits(w uint64) bool {
	if w-0x3030303030303030 != f.w {
		if digitWord(w) != 0 {
			return false
		}
		f.w, f.v = w-0x3030303030303030, wordValue(w)*100000000
	}
	return true
}

// pow10 holds the powers of ten fastLines scales by.
var pow10 = [4]uint64{1, 10, 100, 1000}

// digitWord is zero when the eight bytes of w are all decimal digits.
func digitWord(w uint64) uint64 {
	return (w&0xF0F0F0F0F0F0F0F0 | (w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4) ^ 0x3333333333333333
}

// nonDigits marks the bytes of w that are not decimal digits: the lowest
// set bit of the result is the high bit of the first such byte (bits above
// it may be set falsely, by carries), and it is zero when all are digits.
func nonDigits(w uint64) uint64 {
	z := (w&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
	return (z | (z + 0x7070707070707070)) & 0x8080808080808080
}

// wordValue is the number the eight decimal digits of w spell, the first
// in the lowest byte.
func wordValue(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8
	return ((w&0x000000FF000000FF)*(100+1000000<<32) + ((w>>16)&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

// fastJSONLines is fastLines for JSON lines: it takes the leading lines
// of data that are flat objects (flatFields) with an integer epoch in the
// time field, and no end or duration, and leaves the rest, from the first
// line that is anything else, to the general path, which also produces
// every error. FuzzFastJSON holds the two to the same records.
func (lp *lineParser) fastJSONLines(b *batch, data []byte, withKey bool) []byte {
	scale, ok := lp.tp.fastScale()
	if !ok {
		return data
	}
	maxV := uint64(1<<63-1) / uint64(scale)
	var m shapeMatch
	for len(data) > 0 {
		if !lp.shape.match(data, &m) {
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 || nl > MaxLine {
				return data
			}
			texts, ok := lp.shape.learn(lp, data[:nl])
			if !ok {
				return data
			}
			m = shapeMatch{texts: texts, size: nl + 1}
		}
		v, n := m.tv, m.tn
		if t := m.texts[slotTime]; n == 0 {
			if len(t) == 0 || len(t) > 19 {
				return data
			}
			if v, n = leadingDigits(t); n != len(t) {
				return data
			}
		}
		if m.size > MaxLine+1 || v > maxV || !lp.tp.digitsAgree(n) {
			return data
		}
		b.lines++
		b.At = append(b.At, int64(v)*scale)
		b.Line = append(b.Line, b.lines)
		if withKey {
			b.keyIdx = append(b.keyIdx, lp.keys.index(&b.Batch, m.texts[slotKey]))
		}
		data = data[m.size:]
	}
	return data
}

// colEnd marks the bytes of w that are a newline or a comma: the lowest
// set bit of the result is the high bit of the first such byte (bits above
// it may be set falsely, by borrows).
func colEnd(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	nl, comma := w^('\n'*ones), w^(','*ones)
	return ((nl-ones)&^nl | (comma-ones)&^comma) & highs
}

// quoteBytes marks the quotes in w as colEnd marks newlines and commas.
func quoteBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ ('"' * ones)
	return (q - ones) &^ q & highs
}

// nulBytes marks the NUL bytes of w as colEnd marks newlines and commas.
func nulBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w - ones) &^ w & highs
}

// leadingDigits reads the decimal digits at the start of b, at most 20 of
// them (more than any int64 needs, so that 20 means too many), eight at a
// time where it can: the eight bytes are checked and combined as one
// 64-bit word.
func leadingDigits(b []byte) (v uint64, n int) {
	for n <= 12 && len(b)-n >= 8 {
		w := binary.LittleEndian.Uint64(b[n:])
		if (w&0xF0F0F0F0F0F0F0F0)|(((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4) != 0x3333333333333333 {
			break
		}
		w -= 0x3030303030303030
		w = w*10 + w>>8
		w = ((w&0x000000FF000000FF)*(100+1000000<<32) + ((w>>16)&0x000000FF000000FF)*(1+10000<<32)) >> 32
		v = v*100000000 + w
		n += 8
	}
	for n < len(b) && n < 20 {
		d := b[n] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
		n++
	}
	return v, n
}

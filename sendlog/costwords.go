package sendlog

import (
	"encoding/binary"
	"math/bits"
)

// fastCostEligible reports whether the column layout suits fastCostLines:
// the time in the first column, no end or duration, and one cost column.
func (p *lineParser) fastCostEligible() bool {
	return p.cols[slotTime] == 0 && p.cols[slotEnd] < 0 && p.cols[slotDur] < 0 &&
		len(p.costUnits) == 1 && p.cols[slotCost] > 0 && !p.hasStatus() && !p.hasSettled()
}

// fastCostLines is fastLines for the common machine-written CSV with a
// cost column: an integer epoch first, a plain key if one is read, and a
// whole number of at most 18 digits for the cost, in a line without
// quotes. It stops at the first line that is anything else and returns the
// rest, from that line on, for the general path, which also produces
// every error; every line it takes, the general path reads alike
// (FuzzFastLines holds it to that). It takes nothing until the chunk is
// known to hold no NUL byte.
func (lp *lineParser) fastCostLines(b *batch, data []byte, withKey bool) []byte {
	scale, ok := lp.tp.fastScale()
	if !ok || !lp.nulSeen {
		return data
	}
	maxV := uint64(1<<63-1) / uint64(scale)
	agree := lp.tp.agreeingDigits()
	keyCol, costCol := lp.cols[slotKey], lp.cols[slotCost]
	var first firstWord
	for len(data) > 0 {
		v, n := epochDigits(data, &first)
		if n == 0 || n > 19 || n >= len(data) || data[n] != ',' || v > maxV || agree>>n&1 == 0 {
			break
		}
		key, cost, next := lp.costFields(data[n+1:], keyCol, costCol, withKey)
		if next == 0 || n+next > MaxLine {
			break
		}
		b.lines++
		b.At = append(b.At, int64(v)*scale)
		b.Line = append(b.Line, b.lines)
		b.Cost[0] = append(b.Cost[0], cost)
		if withKey {
			b.keyIdx = append(b.keyIdx, lp.keys.index(&b.Batch, key))
		}
		data = data[n+1+next:]
	}
	return data
}

// costFields reads the key and the cost from rest, the line after its
// first column, in one pass over its bytes, and returns where the next
// line starts in rest; next is 0 when the line is not plain: a quote or
// too few columns, a key with a space or carriage return at an end, a cost
// that is not digits alone, or no line end within MaxLine bytes.
func (lp *lineParser) costFields(rest []byte, keyCol, costCol int, withKey bool) (key []byte, cost int64, next int) {
	col, start := 1, 0
	var costSeen bool
	for i := 0; i <= MaxLine; i++ {
		if i = sepAt(rest, i); i >= len(rest) || rest[i] == '"' {
			return nil, 0, 0
		}
		c := rest[i]
		switch f := rest[start:i]; col {
		case costCol:
			u, m := leadingDigits(f)
			if m == 0 || m > 18 || m != len(f) {
				return nil, 0, 0
			}
			cost, costSeen = int64(u), true
		case keyCol:
			if withKey {
				if len(f) == 0 || f[0] == ' ' || f[len(f)-1] == ' ' || f[len(f)-1] == '\r' {
					return nil, 0, 0
				}
				key = f
			}
		}
		if c == '\n' {
			if !costSeen || (withKey && key == nil) {
				return nil, 0, 0
			}
			return key, cost, i + 1
		}
		col, start = col+1, i+1
	}
	return nil, 0, 0
}

// sepAt returns the index of the first comma, newline or quote in b from i
// on, len(b) when there is none, reading eight bytes at a time.
func sepAt(b []byte, i int) int {
	for ; len(b)-i >= 8; i += 8 {
		if m := colEnd(binary.LittleEndian.Uint64(b[i:])) | quoteBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == ',' || c == '\n' || c == '"' {
			return i
		}
	}
	return i
}

// epochDigits is leadingDigits for a line that starts with an epoch: the
// first eight digits, which sorted epochs change once in 10^8 of their
// units, are kept in first from the line before.
func epochDigits(data []byte, first *firstWord) (v uint64, n int) {
	if len(data) < 16 || !first.digits(binary.LittleEndian.Uint64(data)) {
		return leadingDigits(data)
	}
	w := binary.LittleEndian.Uint64(data[8:])
	if digitWord(w) != 0 {
		return leadingDigits(data)
	}
	v, n = first.v+wordValue(w), 16
	for n < len(data) && n < 20 {
		d := data[n] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
		n++
	}
	return v, n
}

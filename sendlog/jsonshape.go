package sendlog

import (
	"bytes"
	"math/bits"
)

// jsonShape is the text of a JSON line with its number and string values
// cut out: machine-written logs repeat one shape, {"ts":N,"key":"kN"}, on
// every line. A line that is the shape's text around values of the same
// kinds is read by comparing that text, without scanning the object, and
// reads as flatFields reads it (FuzzFastJSON holds the two to that): each
// value takes the same bytes (jsonNumber's number, a string up to its
// quote, no escape), so the same text around them has the same fields.
type jsonShape struct {
	ok   bool
	lits [][]byte  // the text before, between and after the values
	vals []valSpan // each value's kind and the wanted field it fills
	// spans is scratch for learning.
	spans []valSpan
}

// valSpan is where flatFields found a value: line[start:end], a string's
// text without its quotes; slots has bit s set when it fills wanted field s.
type valSpan struct {
	start, end int
	str        bool
	slots      uint8
}

// maxShapeVals bounds the values of a shape: wider lines take flatFields.
const maxShapeVals = 16

// learn reads line with flatFields and takes its shape.
func (s *jsonShape) learn(p *lineParser, line []byte) (texts [nSlots][]byte, ok bool) {
	s.spans = s.spans[:0]
	texts, ok = p.flatFields(line, &s.spans)
	s.ok = ok && len(s.spans) <= maxShapeVals
	if !s.ok {
		return texts, ok
	}
	s.lits, s.vals = s.lits[:0], s.vals[:0]
	at := 0
	for _, v := range s.spans {
		s.lits = append(s.lits, append([]byte(nil), line[at:v.start]...))
		s.vals = append(s.vals, v)
		at = v.end
	}
	s.lits = append(s.lits, append([]byte(nil), line[at:]...))
	return texts, ok
}

// shapeMatch is what jsonShape.match read.
type shapeMatch struct {
	texts [nSlots][]byte
	// tv and tn are the time's value and digits when its text is a number
	// of at most 19 digits, read on the way; tn is 0 otherwise.
	tv   uint64
	tn   int
	size int // the line's length, its newline included
}

// match reads the line at the start of data in the shape, into m, or
// returns false. The line must end in a newline.
func (s *jsonShape) match(data []byte, m *shapeMatch) bool {
	if !s.ok || !bytes.HasPrefix(data, s.lits[0]) {
		return false
	}
	m.texts, m.tn = [nSlots][]byte{}, 0
	p := data[len(s.lits[0]):]
	for i, v := range s.vals {
		var n int
		switch {
		case v.str:
			for n < len(p) && p[n] != '"' && p[n] != '\\' && p[n] != '\n' {
				n++
			}
			if n == len(p) || p[n] != '"' {
				return false
			}
			if v.slots != 0 {
				v.fill(&m.texts, bytes.TrimSpace(p[:n]))
			}
		case v.slots&(1<<slotTime) != 0:
			// What follows the digits is the shape's text, which never
			// starts with a digit or a dot: jsonNumber would take them all.
			var tv uint64
			if tv, n = leadingDigits(p); n > 0 && n < 20 {
				m.tv, m.tn = tv, n
			} else if n = jsonNumber(p); n == 0 {
				return false
			}
			v.fill(&m.texts, p[:n])
		default:
			if n = jsonNumber(p); n == 0 {
				return false
			}
			v.fill(&m.texts, p[:n])
		}
		p = p[n:]
		lit := s.lits[i+1]
		if !bytes.HasPrefix(p, lit) {
			return false
		}
		p = p[len(lit):]
	}
	if len(p) == 0 || p[0] != '\n' {
		return false
	}
	m.size = len(data) - len(p) + 1
	return true
}

// fill sets the wanted fields the value fills.
func (v valSpan) fill(texts *[nSlots][]byte, text []byte) {
	for m := v.slots; m != 0; m &= m - 1 {
		texts[bits.TrailingZeros8(m)] = text
	}
}

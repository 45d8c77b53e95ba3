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

// match reads line in the shape, or returns ok false.
func (s *jsonShape) match(line []byte) (texts [nSlots][]byte, ok bool) {
	if !s.ok || !bytes.HasPrefix(line, s.lits[0]) {
		return texts, false
	}
	p := line[len(s.lits[0]):]
	for i, v := range s.vals {
		var n int
		if v.str {
			for n < len(p) && p[n] != '"' && p[n] != '\\' {
				n++
			}
			if n == len(p) || p[n] != '"' {
				return texts, false
			}
			if v.slots != 0 {
				v.fill(&texts, bytes.TrimSpace(p[:n]))
			}
		} else {
			if n = jsonNumber(p); n == 0 {
				return texts, false
			}
			v.fill(&texts, p[:n])
		}
		p = p[n:]
		lit := s.lits[i+1]
		if !bytes.HasPrefix(p, lit) {
			return texts, false
		}
		p = p[len(lit):]
	}
	return texts, len(p) == 0
}

// fill sets the wanted fields the value fills.
func (v valSpan) fill(texts *[nSlots][]byte, text []byte) {
	for m := v.slots; m != 0; m &= m - 1 {
		texts[bits.TrailingZeros8(m)] = text
	}
}

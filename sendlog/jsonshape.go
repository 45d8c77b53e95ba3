package sendlog

import "bytes"

// jsonShape is the text of a JSON line with its wanted values cut out:
// machine-written logs repeat one shape, {"ts":N,"key":"kN"}, on every
// line. A line that is the shape's text around an integer time and a plain
// string key is read by comparing that text, without scanning the object;
// flatFields reads it alike (FuzzFastJSON holds the two to that), since
// digits and a string without quotes or escapes cannot change how the
// text around them is read.
type jsonShape struct {
	ok    bool
	lits  [3][]byte // the text before, between and after the values
	slots [2]int    // which value comes first and second
	n     int       // how many values: 1 (time) or 2 (time and key)
}

// learn takes the shape of line, whose wanted values flatFields found as
// texts (subslices of line), when its time is an integer and its key, if
// any, a plain string.
func (s *jsonShape) learn(line []byte, texts *[nSlots][]byte, withKey bool) {
	s.ok = false
	off := func(t []byte) int { return cap(line) - cap(t) }
	t := texts[slotTime]
	if _, n := leadingDigits(t); n == 0 || n != len(t) {
		return
	}
	vals := [2][]byte{t}
	s.slots, s.n = [2]int{slotTime}, 1
	if withKey {
		k := texts[slotKey]
		o := off(k)
		if len(k) == 0 || o == 0 || line[o-1] != '"' || o+len(k) >= len(line) || line[o+len(k)] != '"' {
			return
		}
		vals[1], s.slots[1], s.n = k, slotKey, 2
		if off(k) < off(t) {
			vals[0], vals[1] = vals[1], vals[0]
			s.slots = [2]int{slotKey, slotTime}
		}
	}
	at := 0
	for i := range s.n {
		o := off(vals[i])
		s.lits[i] = append(s.lits[i][:0], line[at:o]...)
		at = o + len(vals[i])
	}
	s.lits[s.n] = append(s.lits[s.n][:0], line[at:]...)
	s.ok = true
}

// match reads line in the shape: its time digits and its key, or ok false.
func (s *jsonShape) match(line []byte) (t, key []byte, ok bool) {
	if !bytes.HasPrefix(line, s.lits[0]) {
		return nil, nil, false
	}
	p := line[len(s.lits[0]):]
	for i := range s.n {
		var v []byte
		if s.slots[i] == slotTime {
			_, n := leadingDigits(p)
			if n == 0 {
				return nil, nil, false
			}
			v, t = p[:n], p[:n]
		} else {
			n := 0
			for n < len(p) && p[n] != '"' && p[n] != '\\' {
				n++
			}
			if n == len(p) || p[n] != '"' {
				return nil, nil, false
			}
			v = p[:n]
			key = bytes.TrimSpace(v)
		}
		p = p[len(v):]
		lit := s.lits[i+1]
		if i == s.n-1 {
			return t, key, string(p) == string(lit)
		}
		if !bytes.HasPrefix(p, lit) {
			return nil, nil, false
		}
		p = p[len(lit):]
	}
	return nil, nil, false
}

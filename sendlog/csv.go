package sendlog

import (
	"bytes"
	"fmt"
)

// CSV is read by RFC 4180: a field may be quoted, a quote inside a quoted
// field is written twice, and a quoted field may hold commas and line
// breaks. A quote anywhere else is an error, as encoding/csv (strict) has
// it, so that "x"y and "x"z are never read as one key.

// csvQuoteError is malformed quoting in a CSV record. Reading goes on at
// the next line, not the next record, which the bad quote hid.
type csvQuoteError struct {
	col int // 1-based
	msg string
}

func (e *csvQuoteError) Error() string {
	return fmt.Sprintf("bad CSV quoting in column %d: %s", e.col, e.msg)
}

// csvSplit reads one CSV record, its line end removed, and fills out[s]
// with column cols[s]. Quoted fields come back without their quotes and
// with doubled quotes undone (into p.unq, so the record stays as it is).
// Columns the record lacks stay nil; an empty field is a non-nil empty
// slice. The whole record is read, so that bad quoting past the wanted
// columns is refused too.
func (p *lineParser) csvSplit(b []byte) error {
	if cap(p.unq) < len(b) {
		// Undone fields are never longer than the record: appends below
		// never move the fields already undone.
		p.unq = make([]byte, 0, len(b))
	}
	p.unq = p.unq[:0]
	for i := 0; ; i++ {
		var f []byte
		if len(b) > 0 && b[0] == '"' {
			var err error
			if f, b, err = p.quotedField(b, i+1); err != nil {
				return err
			}
		} else {
			j := bytes.IndexByte(b, ',')
			if j < 0 {
				j = len(b)
			}
			f, b = b[:j:j], b[j:]
			if bytes.IndexByte(f, '"') >= 0 {
				return &csvQuoteError{i + 1, `a quote inside an unquoted field (quote the whole field and write the quote twice: "a""b")`}
			}
		}
		for s, c := range p.cols {
			if c == i {
				p.fields[s] = f
			}
		}
		for k, c := range p.textCols {
			if c == i {
				p.textBuf[k] = f
			}
		}
		if len(b) == 0 {
			return nil
		}
		b = b[1:] // the comma
	}
}

// quotedField reads the quoted field that starts b, column col, and
// returns its text and the rest of b, from the comma after it.
func (p *lineParser) quotedField(b []byte, col int) (f, rest []byte, err error) {
	end, plain := 1, true
	for {
		q := bytes.IndexByte(b[end:], '"')
		if q < 0 {
			return nil, nil, &csvQuoteError{col, "a quoted field is not closed"}
		}
		end += q
		if end+1 < len(b) && b[end+1] == '"' {
			end, plain = end+2, false
			continue
		}
		break
	}
	f, rest = b[1:end:end], b[end+1:]
	if len(rest) > 0 && rest[0] != ',' {
		return nil, nil, &csvQuoteError{col, `text after the closing quote (a quote inside a quoted field is written twice: "a""b")`}
	}
	if plain && bytes.IndexByte(f, '\r') < 0 {
		return f, rest, nil
	}
	start := len(p.unq)
	for i := 0; i < len(f); i++ {
		c := f[i]
		if (c == '"' && i+1 < len(f) && f[i+1] == '"') || (c == '\r' && i+1 < len(f) && f[i+1] == '\n') {
			i++
			c = f[i]
		}
		p.unq = append(p.unq, c)
	}
	return p.unq[start:len(p.unq):len(p.unq)], rest, nil
}

// csvRecordLen returns the length of the CSV record at the start of data,
// up to the line end outside quotes (not included), and how many line
// breaks lie inside it; n is -1 when a quote is left open to the end of
// data. Quotes are paired by count, which is exact for well-formed
// records; csvSplit refuses the others.
func csvRecordLen(data []byte) (n, breaks int) {
	in := false
	for i, c := range data {
		switch c {
		case '"':
			in = !in
		case '\n':
			if !in {
				return i, breaks
			}
			breaks++
		}
	}
	if in {
		return -1, breaks
	}
	return len(data), breaks
}

// csvCut returns where the last CSV record that ends in b ends: the index
// of the last line break outside quotes, b starting outside them, or -1.
func csvCut(b []byte) int {
	cut, i := -1, 0
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			if n := bytes.LastIndexByte(b[i:], '\n'); n >= 0 {
				cut = i + n
			}
			return cut
		}
		if n := bytes.LastIndexByte(b[i:i+q], '\n'); n >= 0 {
			cut = i + n
		}
		e := bytes.IndexByte(b[i+q+1:], '"')
		if e < 0 {
			return cut
		}
		i += q + 1 + e + 1
	}
}

// quotesOpen reports whether a quote is left open after b, given whether
// one was open before it.
func quotesOpen(b []byte, open bool) bool {
	return open != (bytes.Count(b, []byte{'"'})%2 == 1)
}

// AppendCSVField appends s to dst as one CSV field by RFC 4180: as it is
// when it holds no comma, quote, line break or leading or trailing space,
// else quoted, with its quotes written twice. Reader reads it back as s.
func AppendCSVField(dst []byte, s string) []byte {
	if !csvNeedsQuotes(s) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

func csvNeedsQuotes(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			return true
		}
	}
	return false
}

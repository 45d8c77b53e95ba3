package sendlog

import (
	"bufio"
	"bytes"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// Lines parses a log one line at a time, for a log that grows while it is
// read (rlcheck watch), where Reader would wait for a chunk to fill. The
// layout is fixed as Reader fixes it, from the lines up to the first that
// is neither blank nor a comment (held until then, 64 KiB at most), and
// each line is parsed as Reader parses it. Gzip input cannot be followed.
type Lines struct {
	r     *Reader
	line  int64
	ready bool
	held  [][]byte // the lines before the layout is known
	size  int
	// pend is a CSV record whose quotes hold line breaks, while its
	// closing quote is still to come; breaks counts them.
	pend   []byte
	breaks int
}

// NewLines returns a parser for the lines of the log called name.
func NewLines(name string, opt Options) *Lines {
	return &Lines{r: NewReader(name, nil, opt)}
}

// Reader describes the layout in use (Format, Detected, Column).
func (l *Lines) Reader() *Reader { return l.r }

// Parse takes the next line, without its line end, and returns the sends
// it completes: none for a header, a blank or comment line, or a request
// the access filter leaves out, and several when the lines held to fix the
// layout are let go. Bad lines are *InputError.
func (l *Lines) Parse(b []byte) ([]Record, error) {
	if len(b) > MaxLine {
		return nil, l.r.errorf(l.line+int64(len(l.held))+1, b[:40], "line longer than %d bytes", MaxLine)
	}
	if l.ready {
		rec, ok, err := l.parse(b)
		if !ok {
			return nil, err
		}
		return []Record{rec}, nil
	}
	if l.line == 0 && len(l.held) == 0 {
		b = bytes.TrimPrefix(b, []byte(utf8BOM))
		if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
			return nil, l.r.errorf(0, nil, "gzip data cannot be followed as it grows")
		}
	}
	l.held = append(l.held, append([]byte(nil), b...))
	l.size += len(b) + 1
	if t := bytes.TrimSpace(b); (len(t) == 0 || t[0] == '#') && l.size < 64<<10 {
		return nil, nil
	}
	return l.Flush()
}

// Flush fixes the layout from the lines held so far, if it is not fixed
// yet, and parses them: at the end of the input, or when the file is
// replaced.
func (l *Lines) Flush() ([]Record, error) {
	if l.ready && l.pend != nil {
		// A quote left open to the end: parsed as it is, to be refused.
		rec, ok, err := l.parseRecord(l.pend)
		l.pend, l.breaks = nil, 0
		if !ok {
			return nil, err
		}
		return []Record{rec}, nil
	}
	if l.ready || len(l.held) == 0 {
		return nil, nil
	}
	held := l.held
	l.held = nil
	header, err := l.start(held)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, b := range held {
		if header {
			if t := bytes.TrimSpace(b); len(t) > 0 {
				header = false // the first non-blank line: the header
			}
			l.line++
			continue
		}
		rec, ok, err := l.parse(b)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, rec)
		}
	}
	return out, nil
}

// parse reads one line once the layout is known; a CSV line that leaves
// a quote open is held until the line that closes it.
func (l *Lines) parse(b []byte) (rec Record, ok bool, err error) {
	if l.r.lp.format != FormatCSV || (l.pend == nil && !quotesOpen(b, false)) {
		return l.parseRecord(b)
	}
	if l.pend == nil {
		l.pend = append([]byte(nil), b...)
	} else {
		l.pend = append(append(l.pend, '\n'), b...)
		l.breaks++
	}
	if quotesOpen(l.pend, false) && len(l.pend) <= MaxLine {
		return rec, false, nil
	}
	b = l.pend
	l.pend = nil
	return l.parseRecord(b)
}

// parseRecord reads one line, or a CSV record that held line breaks.
func (l *Lines) parseRecord(b []byte) (rec Record, ok bool, err error) {
	l.line++
	start := l.line
	l.line += int64(l.breaks)
	l.breaks = 0
	r := l.r
	b = trimEOL(b)
	rec, err = r.lp.parse(b)
	switch {
	case err == errSkipLine:
		return rec, false, nil
	case err == errBinary:
		return rec, false, r.errorf(start, nil, "%v", err)
	case err != nil:
		e := lineError(start, b, err)
		e.File = r.name
		return rec, false, e
	}
	rec.Line = start
	r.sends++
	return rec, true, nil
}

// start fixes the layout from the first lines, and reports whether the
// first non-blank one is a CSV header.
func (l *Lines) start(lines [][]byte) (header bool, err error) {
	l.ready = true
	r := l.r
	r.br = bufio.NewReaderSize(bytes.NewReader(append(bytes.Join(lines, []byte("\n")), '\n')), 64<<10+4096)
	lp := r.lp
	lp.format = r.opt.Format
	if lp.format == FormatAuto {
		lp.format = r.sniff()
	}
	lp.checkNUL = true
	if err := r.checkCosts(); err != nil {
		return false, err
	}
	switch lp.format {
	case FormatCSV:
		for i, b := range lines {
			if len(bytes.TrimSpace(b)) > 0 {
				r.base = int64(i)
				err := r.chooseColumns(trimEOL(b))
				return r.headers > 0, err
			}
		}
	case FormatJSONL:
		r.startJSON()
	case FormatNginx, FormatApache:
		f := accesslog.Nginx
		if lp.format == FormatApache {
			f = accesslog.Apache
		}
		lp.access = &accesslog.Parser{Format: f, Filter: r.opt.AccessFilter}
	}
	return false, nil
}

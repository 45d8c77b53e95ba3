package sendlog

import (
	"bytes"
	"errors"
	"fmt"
)

// Parsing a chunk of lines into a batch: the fast paths first, then the
// general path, which produces every error.

// parseMapped is parseChunk for a chunk that may be part of a file's
// mapping: when the file shrank under it, the batch holds no sends but
// errShrunk, after the lines before the chunk.
func parseMapped(b *batch, c chunk, lp *lineParser, skipInvalid bool) {
	b.mapped, b.end = c.mapped, c.end
	if c.mapped {
		defer func() {
			if v := recover(); v != nil {
				if !isFault(v) {
					panic(v)
				}
				b.Batch.reset()
				b.lines, b.skipped, b.skips, b.err, b.readErr = 0, 0, nil, nil, errShrunk
				b.unit = unitSeen{}
			}
		}()
	}
	parseChunk(b, c, lp, skipInvalid)
}

// parseChunk parses every line of a chunk into b, reusing its slices.
func parseChunk(b *batch, c chunk, lp *lineParser, skipInvalid bool) {
	b.Batch.reset()
	b.seq, b.data, b.lines, b.skipped, b.skips, b.err, b.readErr = c.seq, c.data, 0, 0, nil, nil, nil
	hasEnd := lp.hasEnd()
	hasKey := lp.hasKey()
	before := lp.filteredSoFar()
	defer func() { b.filtered = lp.filteredSoFar() - before }()
	fail := func(line int64, text []byte, err error) bool {
		e := lineError(line, text, err)
		if skipInvalid {
			b.skipped++
			if len(b.skips) < 5 {
				b.skips = append(b.skips, e)
			}
			return true
		}
		b.err = e
		return false
	}
	if c.tooLong {
		b.lines = 1
		if c.endless {
			b.err = &InputError{Line: 1, Text: string(c.data), Msg: fmt.Sprintf("line longer than %d bytes, even for sendlog.Options.SkipInvalid", MaxSkip)}
			return
		}
		fail(1, c.data, fmt.Errorf("line longer than %d bytes", MaxLine))
		return
	}
	b.unit = unitSeen{}
	if hasKey {
		lp.keys.reset()
	}
	if lp.chunkUnit {
		lp.tp.unit, lp.tp.detected = UnitAuto, ""
	}
	data := c.data
	// A NUL byte makes a line binary, which the general path checks for
	// when the chunk holds one. fastLines refuses such lines itself until
	// the chunk is looked at, which waits for the first line it leaves.
	var fast func(*batch, []byte, bool) []byte
	lp.checkNUL, lp.nulSeen = false, false
	switch {
	case disableFastPath:
	case lp.format == FormatCSV && lp.fastEligible():
		fast = lp.fastLines
	case lp.format == FormatCSV && lp.fastCostEligible():
		fast = lp.fastCostLines
	case lp.format == FormatJSONL && lp.flatReady() && lp.flat.timeOnly:
		fast = lp.fastJSONLines
	}
	if fast == nil || lp.format != FormatCSV {
		lp.checkNUL, lp.nulSeen = bytes.IndexByte(data, 0) >= 0, true
		if lp.checkNUL {
			fast = nil
		}
	}
	for len(data) > 0 {
		if fast != nil {
			if data = fast(b, data, hasKey); len(data) == 0 {
				break
			}
			if !lp.nulSeen {
				lp.checkNUL, lp.nulSeen = bytes.IndexByte(data, 0) >= 0, true
				if !lp.checkNUL {
					continue // fastLines takes more lines once the rest is known to hold no NUL
				}
				fast = nil
			}
		}
		var ok bool
		if data, ok = lp.general(b, data, hasEnd, hasKey, fail); !ok {
			return
		}
	}
	b.readErr = c.readErr
}

// general parses the next line of data on the general path, or with CSV
// the next record, which runs on over line breaks inside quotes, into b,
// and returns the rest of data; ok is false when fail stops parsing.
func (lp *lineParser) general(b *batch, data []byte, hasEnd, hasKey bool, fail func(int64, []byte, error) bool) (rest []byte, ok bool) {
	line, rest, breaks := lp.nextRecord(data)
	start := b.lines + 1
	b.lines += 1 + int64(breaks)
	if len(line) > MaxLine {
		return rest, fail(start, line[:40], fmt.Errorf("line longer than %d bytes", MaxLine))
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	rec, err := lp.parse(line)
	if lp.chunkUnit && b.unit.unit == UnitAuto && lp.tp.unit != UnitAuto {
		b.unit = unitSeen{lp.tp.unit, lp.tp.digits, start, string(line), lp.tp.detected}
	}
	if err == errSkipLine {
		return rest, true
	}
	if err != nil {
		var qe *csvQuoteError
		if breaks > 0 && errors.As(err, &qe) {
			// The bad quote hid the line ends after it: go on at the next line.
			b.lines = start
			line = bytes.TrimSuffix(line[:bytes.IndexByte(line, '\n')], []byte("\r"))
			rest = data[bytes.IndexByte(data, '\n')+1:]
		}
		if err == errBinary {
			line = nil
		}
		return rest, fail(start, line, err)
	}
	b.At = append(b.At, rec.At)
	b.Line = append(b.Line, start)
	if hasEnd {
		b.End = append(b.End, rec.End)
	}
	if hasKey {
		b.keyIdx = append(b.keyIdx, lp.keys.index(&b.Batch, rec.Key))
	}
	for u := range lp.costUnits {
		b.Cost[u] = append(b.Cost[u], rec.Cost[u])
	}
	if lp.hasStatus() {
		b.Status = append(b.Status, rec.Status)
	}
	if lp.hasTexts() {
		b.Texts = append(b.Texts, rec.Texts)
	}
	if lp.hasSettled() {
		b.Settled = append(b.Settled, rec.Settled)
		for u := range lp.costUnits {
			b.Actual[u] = append(b.Actual[u], rec.Actual[u])
		}
	}
	return rest, true
}

// nextRecord cuts the next line off data, or with CSV the next record,
// which runs on over the line breaks inside quotes; breaks counts them.
// A quote left open to the end of data cuts the line alone, for csvSplit
// to refuse.
func (lp *lineParser) nextRecord(data []byte) (line, rest []byte, breaks int) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		i = len(data)
	}
	if lp.format == FormatCSV && bytes.IndexByte(data[:i], '"') >= 0 {
		if n, br := csvRecordLen(data); n >= 0 {
			i, breaks = n, br
		}
	}
	if i < len(data) {
		return data[:i], data[i+1:], breaks
	}
	return data, nil, breaks
}

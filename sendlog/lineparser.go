package sendlog

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// Column slots a line parser extracts.
const (
	slotTime = iota
	slotKey
	slotEnd
	slotDur
	slotStatus
	slotSettled
	slotCost                         // MaxCosts slots, one per cost unit
	slotActual = slotCost + MaxCosts // MaxCosts slots: the actual costs
	nSlots     = slotActual + MaxCosts
)

var slotNames = [nSlots]string{"time", "key", "end", "duration", "status", "settlement", "cost", "cost", "cost", "cost",
	"actual cost", "actual cost", "actual cost", "actual cost"}

// lineParser turns one data line into a Record. Its layout (format, columns,
// fields, unit) is fixed before parsing starts; each parsing goroutine owns
// a copy.
type lineParser struct {
	format  Format
	cols    [nSlots]int      // CSV column per slot, -1 when unused
	paths   [nSlots][]string // JSON path per slot, nil when unused
	tp      timeParser
	durUnit Unit
	jp      fastjson.Parser
	numBuf  []byte
	fields  [nSlots][]byte
	unq     []byte // CSV fields with their doubled quotes undone
	// header is the CSV header, when there is one, and timeFallback
	// whether the time column is the first for want of one named: for
	// errors.
	header       []string
	timeFallback bool
	timeErr      bool              // record failed on the time
	access       *accesslog.Parser // access-log formats only
	keys         keyDict
	flat         flatLayout // fastJSON's view of the fields
	shape        jsonShape  // fastJSONLines': the last line's text around its values
	// checkNUL asks parse to refuse lines with NUL bytes; parseChunk sets
	// it only for chunks that hold one, sparing the common case a scan.
	checkNUL bool
	nulSeen  bool // parseChunk has looked for NUL bytes in the rest of its chunk
	// chunkUnit is set when the first lines fixed no unit: each chunk then
	// detects its own, and the Reader holds the chunks to the first.
	chunkUnit bool
	costUnits []string // the units of the cost slots, in order
	// textCols and textPaths are where Options.Texts are read (-1, nil:
	// none); textBuf holds a line's texts while it is parsed.
	textCols  []int
	textPaths [][]string
	textBuf   [][]byte
	// statusFilter, with a status slot, keeps the lines whose status it
	// matches (Options.AccessFilter's statuses); filtered counts the rest.
	statusFilter *accesslog.Filter
	filtered     int64
}

var errSkipLine = errors.New("skip line")

func (p *lineParser) hasEnd() bool {
	return p.access != nil || p.cols[slotEnd] >= 0 || p.paths[slotEnd] != nil || p.cols[slotDur] >= 0 || p.paths[slotDur] != nil
}

func (p *lineParser) hasKey() bool { return p.cols[slotKey] >= 0 || p.paths[slotKey] != nil }

func (p *lineParser) hasCosts() bool { return len(p.costUnits) > 0 }

// hasSettled reports whether the layout reads a settlement instant.
func (p *lineParser) hasSettled() bool {
	return p.cols[slotSettled] >= 0 || p.paths[slotSettled] != nil
}

// hasTexts reports whether the layout reads texts (Options.Texts).
func (p *lineParser) hasTexts() bool { return len(p.textCols)+len(p.textPaths) > 0 }

func (p *lineParser) hasStatus() bool {
	return p.cols[slotStatus] >= 0 || p.paths[slotStatus] != nil
}

// slotName names a slot in errors: "the tokens cost" for a cost slot.
func (p *lineParser) slotName(s int) string {
	if s >= slotCost && s-slotCost < len(p.costUnits) {
		return "the " + p.costUnits[s-slotCost] + " cost"
	}
	if s >= slotActual && s-slotActual < len(p.costUnits) {
		return "the actual " + p.costUnits[s-slotActual] + " cost"
	}
	return "the " + slotNames[s]
}

// clone returns a parser with the same layout and its own scratch state.
func (p *lineParser) clone() *lineParser {
	c := &lineParser{format: p.format, cols: p.cols, paths: p.paths, tp: p.tp, durUnit: p.durUnit, checkNUL: true, chunkUnit: p.chunkUnit,
		header: p.header, timeFallback: p.timeFallback, costUnits: p.costUnits, statusFilter: p.statusFilter,
		textCols: p.textCols, textPaths: p.textPaths}
	if p.access != nil {
		c.access = &accesslog.Parser{Format: p.access.Format, Filter: p.access.Filter}
	}
	return c
}

// parseAccess reads one access-log line; requests the filter leaves out
// are skipped (and counted by the accesslog.Parser).
func (p *lineParser) parseAccess(b []byte) (Record, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return Record{}, errSkipLine
	}
	e, keep, err := p.access.Parse(b)
	if err != nil {
		return Record{}, accessError(err, b)
	}
	if !keep {
		return Record{}, errSkipLine
	}
	return Record{At: e.Start, End: e.End}, nil
}

// accessError words an access-log error for an InputError, which quotes
// the line itself: a field that is the whole line is not quoted twice.
func accessError(err error, line []byte) error {
	var ae *accesslog.Error
	if !errors.As(err, &ae) {
		return errors.New(strings.TrimPrefix(err.Error(), "accesslog: "))
	}
	if ae.Text != string(bytes.TrimRight(line, " \t\r\n")) {
		return errors.New(strings.TrimPrefix(err.Error(), "accesslog: "))
	}
	msg := ae.Format.String() + " " + ae.Field + ": " + ae.Msg
	if bytes.IndexByte(line, '[') < 0 && bytes.IndexByte(line, ',') >= 0 {
		msg += " (the line looks like CSV, not an " + ae.Format.String() + " access log)"
	}
	return errors.New(msg)
}

// parse returns the record on one line (Line unset), errSkipLine for lines
// that hold no send, or an error saying what is wrong with the line.
func (p *lineParser) parse(b []byte) (Record, error) {
	if p.checkNUL && bytes.IndexByte(b, 0) >= 0 {
		return Record{}, errBinary
	}
	switch p.format {
	case FormatCSV:
		return p.keepStatus(p.parseCSV(b))
	case FormatJSONL:
		return p.keepStatus(p.parseJSON(b))
	case FormatNginx, FormatApache:
		return p.parseAccess(b)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '#' {
		return Record{}, errSkipLine
	}
	at, err := p.tp.parse(b)
	return Record{At: at}, err
}

// keepStatus passes a record on, unless the status filter leaves it out.
func (p *lineParser) keepStatus(rec Record, err error) (Record, error) {
	if err == nil && p.statusFilter != nil && !p.statusFilter.KeepStatus(int(rec.Status)) {
		p.filtered++
		return Record{}, errSkipLine
	}
	return rec, err
}

// filteredSoFar counts the lines a filter has left out.
func (p *lineParser) filteredSoFar() int64 {
	if p.access != nil {
		return p.access.Filtered
	}
	return p.filtered
}

var errBinary = errors.New("binary data (a NUL byte): this does not look like a text send log")

func (p *lineParser) parseCSV(b []byte) (Record, error) {
	if rec, ok := p.fastCSV(b); ok {
		return rec, nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Record{}, errSkipLine
	}
	for s := range p.fields {
		p.fields[s] = nil
	}
	p.textBuf = p.textBuf[:0]
	for range p.textCols {
		p.textBuf = append(p.textBuf, nil)
	}
	if err := p.csvSplit(b); err != nil {
		return Record{}, err
	}
	for s, c := range p.cols {
		if c >= 0 && p.fields[s] == nil {
			return Record{}, fmt.Errorf("no column %d (%s)", c+1, p.slotName(s))
		}
	}
	rec, err := p.record(bytes.TrimSpace(p.fields[slotTime]), p.fields[slotKey],
		bytes.TrimSpace(p.fields[slotEnd]), bytes.TrimSpace(p.fields[slotDur]))
	if err == nil {
		err = p.costs(&rec, &p.fields)
	}
	if err == nil {
		err = p.settlement(&rec, &p.fields)
	}
	if err == nil {
		err = p.status(&rec, p.fields[slotStatus])
	}
	if err == nil && len(p.textCols) > 0 {
		rec.Texts = make([]string, len(p.textBuf))
		for i, t := range p.textBuf {
			rec.Texts[i] = string(bytes.TrimSpace(t))
		}
	}
	if err != nil && p.timeErr && p.timeFallback {
		return rec, p.csvTimeError(err, b)
	}
	return rec, err
}

// csvTimeError says, for a time column taken as the first for want of a
// name, which column a bad time was read from, what the header holds and
// which other column of the line holds a time (with the Fix naming it).
func (p *lineParser) csvTimeError(err error, line []byte) error {
	c := p.cols[slotTime]
	msg := fmt.Sprintf("column %d", c+1)
	if c < len(p.header) {
		msg += fmt.Sprintf(" (%q)", strings.TrimSpace(p.header[c]))
	}
	msg += ": " + err.Error()
	var fe *fixError
	if errors.As(err, &fe) {
		return wrapFix(msg, err)
	}
	if p.header == nil {
		msg += "; the file has no header"
	} else {
		msg += "; the header is " + shorten(strings.Join(p.header, ","), 80)
	}
	// The line's quoting is sound (csvSplit read it), so encoding/csv
	// reads it alike.
	fields, _ := csv.NewReader(bytes.NewReader(line)).Read()
	for i, f := range fields {
		if i == c {
			continue
		}
		if _, perr := newTimeParser(p.tp.unit).parse([]byte(strings.TrimSpace(f))); perr == nil {
			name := strconv.Itoa(i + 1)
			if i < len(p.header) {
				name = strings.TrimSpace(p.header[i])
			}
			return &fixError{msg: fmt.Sprintf("%s; column %d (%q) holds a time", msg, i+1, name), fix: Fix{Option: "TimeCol", Value: name}}
		}
	}
	return errors.New(msg)
}

// wrapFix is msg, keeping the Fix err carries, if any.
func wrapFix(msg string, err error) error {
	var fe *fixError
	if errors.As(err, &fe) {
		return &fixError{msg: msg, fix: fe.fix}
	}
	return errors.New(msg)
}

// shorten cuts s to about max bytes, for messages.
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// fastCSV reads the common machine-written line, an integer epoch in the
// first column and perhaps a plain key in the second, without the general
// field splitter. It declines (ok false) anything else, which then takes
// the general path, errors included.
func (p *lineParser) fastCSV(b []byte) (rec Record, ok bool) {
	if !p.fastEligible() {
		return rec, false
	}
	var v uint64
	n := 0
	for n < len(b) && n < 20 {
		d := b[n] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
		n++
	}
	if n == 0 || n > 19 || (n < len(b) && b[n] != ',') {
		return rec, false
	}
	at, ok := p.tp.fastInt(v, n)
	if !ok {
		return rec, false
	}
	rec.At = at
	if bytes.IndexByte(b[n:], '"') >= 0 {
		return rec, false // quoting is the general path's
	}
	if p.cols[slotKey] == 1 {
		if n == len(b) {
			return rec, false
		}
		key := b[n+1:]
		if i := bytes.IndexByte(key, ','); i >= 0 {
			key = key[:i]
		}
		if len(key) > 0 && (key[0] == ' ' || key[len(key)-1] == ' ') {
			return rec, false
		}
		rec.Key = key
	}
	return rec, true
}

// fastEligible reports whether the column layout suits fastCSV.
func (p *lineParser) fastEligible() bool {
	return p.cols[slotTime] == 0 && p.cols[slotEnd] < 0 && p.cols[slotDur] < 0 && p.cols[slotKey] <= 1 && !p.hasCosts() && !p.hasStatus() && !p.hasTexts()
}

// status reads the record's HTTP status, when the layout has one: a
// whole number from 100 to 599.
func (p *lineParser) status(rec *Record, text []byte) error {
	if !p.hasStatus() {
		return nil
	}
	t := bytes.TrimSpace(text)
	if len(t) == 0 {
		return errors.New("no status")
	}
	n, err := strconv.Atoi(string(t))
	if err != nil || n < 100 || n > 599 {
		return fmt.Errorf("status %q: not an HTTP status code (100 to 599)", t)
	}
	rec.Status = int16(n)
	return nil
}

// costs reads the record's cost in each unit from the texts of the cost
// slots: a whole number from 0 up, or an error naming the unit.
func (p *lineParser) costs(rec *Record, texts *[nSlots][]byte) error {
	for i, unit := range p.costUnits {
		t := bytes.TrimSpace(texts[slotCost+i])
		c, err := parseCost(t)
		if err != nil {
			return fmt.Errorf("%s cost %q: %w", unit, t, err)
		}
		rec.Cost[i] = c
	}
	return nil
}

// settlement reads the record's settlement, when the layout has one: an
// empty settlement instant leaves the send never settled, its actual
// costs its estimates; a settled send needs each actual cost read.
func (p *lineParser) settlement(rec *Record, texts *[nSlots][]byte) error {
	if !p.hasSettled() {
		return nil
	}
	rec.Actual = rec.Cost
	t := bytes.TrimSpace(texts[slotSettled])
	if len(t) == 0 {
		rec.Settled = NotSettled
		return nil
	}
	u, err := p.tp.parse(t)
	if err != nil {
		return fmt.Errorf("settlement: %w", err)
	}
	if u < rec.At {
		return errors.New("settled before the send")
	}
	rec.Settled = u
	for i, unit := range p.costUnits {
		if p.cols[slotActual+i] < 0 && p.paths[slotActual+i] == nil {
			continue
		}
		t := bytes.TrimSpace(texts[slotActual+i])
		if rec.Actual[i], err = parseCost(t); err != nil {
			return fmt.Errorf("actual %s cost %q: %w", unit, t, err)
		}
	}
	return nil
}

// parseCost reads a cost: decimal digits, at most 18 of them, so that no
// single cost comes near overflowing a window's int64 sum.
func parseCost(t []byte) (int64, error) {
	switch {
	case len(t) == 0:
		return 0, errors.New("missing")
	case t[0] == '-':
		return 0, errors.New("negative")
	case len(t) > 18:
		return 0, errors.New("more than 18 digits")
	}
	var v int64
	for _, c := range t {
		if c < '0' || c > '9' {
			if c == '.' || c == 'e' || c == 'E' {
				return 0, errors.New("not a whole number")
			}
			return 0, errors.New("not a number")
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

// record builds a Record from the extracted texts.
func (p *lineParser) record(at, key, end, dur []byte) (Record, error) {
	var rec Record
	var err error
	if rec.At, err = p.tp.parse(at); err != nil {
		p.timeErr = true
		return rec, err
	}
	p.timeErr = false
	rec.Key = key
	switch {
	case p.cols[slotEnd] >= 0 || p.paths[slotEnd] != nil:
		if rec.End, err = p.tp.parse(end); err != nil {
			return rec, fmt.Errorf("end: %w", err)
		}
		if rec.End < rec.At {
			return rec, fmt.Errorf("the call ends before it starts")
		}
	case p.cols[slotDur] >= 0 || p.paths[slotDur] != nil:
		d, err := parseDuration(dur, p.durUnit)
		if err != nil {
			return rec, err
		}
		if d > int64(1<<63-1)-rec.At {
			return rec, fmt.Errorf("duration: %w", errTooBig)
		}
		rec.End = rec.At + d
	}
	return rec, nil
}

// parseDuration reads a call duration: a plain number in unit (seconds when
// unit is UnitAuto), or a Go duration with its own unit ("150ms").
func parseDuration(b []byte, unit Unit) (int64, error) {
	if len(b) == 0 {
		return 0, errors.New("missing duration")
	}
	if c := b[len(b)-1]; (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
		d, err := time.ParseDuration(string(b))
		if err != nil {
			return 0, fmt.Errorf("duration: not a number or a Go duration")
		}
		if d < 0 {
			return 0, errors.New("negative duration")
		}
		if d > maxDuration {
			return 0, errors.New("duration longer than 100 years")
		}
		return int64(d), nil
	}
	if b[0] == '-' {
		return 0, errors.New("negative duration")
	}
	n, err := parseNumber(b)
	if err != nil {
		return 0, fmt.Errorf("duration: %w", err)
	}
	d, err := n.nanos(unit.exp10())
	if err != nil {
		return 0, fmt.Errorf("duration: %w", err)
	}
	if d > int64(maxDuration) {
		return 0, errors.New("duration longer than 100 years")
	}
	return d, nil
}

func (p *lineParser) parseJSON(b []byte) (Record, error) {
	if !disableFastPath && !p.hasCosts() && !p.hasStatus() && !p.hasTexts() {
		if rec, ok, err := p.fastJSON(b); ok {
			return rec, err
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Record{}, errSkipLine
	}
	v, err := p.jp.ParseBytes(b)
	if err != nil {
		return Record{}, fmt.Errorf("bad JSON: %v", err)
	}
	if p.paths[slotTime] == nil {
		return Record{}, p.noTimeField(v)
	}
	var texts [nSlots][]byte
	for s, path := range p.paths {
		if path == nil {
			continue
		}
		f := v.Get(path...)
		name := strings.Join(path, ".")
		if (s == slotSettled || s >= slotActual) && (f == nil || f.Type() == fastjson.TypeNull) {
			continue // never settled, or settled without it: settlement says which
		}
		if f == nil && s >= slotCost && s < slotActual {
			unit := p.costUnits[s-slotCost]
			return Record{}, costFixError("sendlog.Options.Costs "+unit+"="+name, fmt.Sprintf("no field %q", name), unit, name, numericPaths(v))
		}
		if f == nil {
			return Record{}, fmt.Errorf("no field %q", name)
		}
		switch f.Type() {
		case fastjson.TypeNumber:
			start := len(p.numBuf)
			p.numBuf = f.MarshalTo(p.numBuf)
			texts[s] = p.numBuf[start:]
		case fastjson.TypeString:
			sb, _ := f.StringBytes()
			texts[s] = bytes.TrimSpace(sb)
		case fastjson.TypeNull:
			if s == slotTime {
				return Record{}, errEmpty
			}
			return Record{}, fmt.Errorf("field %q is null", name)
		default:
			return Record{}, fmt.Errorf("field %q is a JSON %s, not a %s", name, f.Type(), slotNames[s])
		}
	}
	rec, err := p.record(texts[slotTime], texts[slotKey], texts[slotEnd], texts[slotDur])
	if err == nil {
		err = p.costs(&rec, &texts)
	}
	if err == nil {
		err = p.settlement(&rec, &texts)
	}
	if err == nil {
		err = p.status(&rec, texts[slotStatus])
	}
	if err == nil && len(p.textPaths) > 0 {
		rec.Texts = jsonTexts(v, p.textPaths)
	}
	p.numBuf = p.numBuf[:0]
	return rec, err
}

// fastJSON reads the common JSON line, a flat object whose fields are
// numbers, strings without escapes, true, false or null, and whose wanted
// fields are top-level numbers or strings, without building a parse tree.
// It declines (ok false) anything else, which then takes the general path;
// what it takes it reads as that path does (the same texts go to record,
// so the same errors), which FuzzFastJSON holds it to.
func (p *lineParser) fastJSON(b []byte) (rec Record, ok bool, err error) {
	texts, ok := p.flatFields(b, nil)
	if !ok {
		return rec, false, nil
	}
	if t := texts[slotTime]; p.flat.timeOnly && len(t) > 0 && len(t) <= 19 {
		// An integer epoch, the common case, as fastCSV reads it.
		if v, n := leadingDigits(t); n == len(t) {
			if at, ok := p.tp.fastInt(v, n); ok {
				return Record{At: at, Key: texts[slotKey]}, true, nil
			}
		}
	}
	rec, err = p.record(texts[slotTime], texts[slotKey], texts[slotEnd], texts[slotDur])
	return rec, true, err
}

// flatReady works out, once, what flatFields needs of the fields, and
// reports whether they suit it.
func (p *lineParser) flatReady() bool {
	if !p.flat.ready {
		p.flat = flatLayout{ready: true, ok: p.paths[slotTime] != nil, timeOnly: !p.hasEnd() && !p.hasCosts() && !p.hasStatus() && !p.hasTexts()}
		for s, path := range p.paths {
			if path != nil {
				p.flat.ok = p.flat.ok && len(path) == 1
				p.flat.names[s], p.flat.want[s] = path[0], true
			}
		}
	}
	return p.flat.ok
}

// flatFields finds the texts of the wanted fields in a flat JSON object,
// as fastJSON describes it; ok is false for anything else. With spans, it
// also notes where each number or string value lies (jsonShape learns from
// them).
func (p *lineParser) flatFields(b []byte, spans *[]valSpan) (texts [nSlots][]byte, ok bool) {
	if !p.flatReady() {
		return texts, false
	}
	var found [nSlots]bool
	i := jsonSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return texts, false
	}
	i = jsonSpace(b, i+1)
	for {
		if i == len(b) || b[i] != '"' {
			return texts, false
		}
		key, n := jsonPlainString(b[i+1:])
		if n < 0 {
			return texts, false
		}
		i = jsonSpace(b, i+1+n)
		if i == len(b) || b[i] != ':' {
			return texts, false
		}
		if i = jsonSpace(b, i+1); i == len(b) {
			return texts, false
		}
		var val []byte
		isText := true
		var span valSpan
		switch c := b[i]; {
		case c == '"':
			if val, n = jsonPlainString(b[i+1:]); n < 0 {
				return texts, false
			}
			span = valSpan{start: i + 1, end: i + n, str: true}
			val = bytes.TrimSpace(val)
			i += 1 + n
		case c == '-' || (c >= '0' && c <= '9'):
			if n = jsonNumber(b[i:]); n == 0 {
				return texts, false
			}
			span = valSpan{start: i, end: i + n}
			val = b[i : i+n]
			i += n
		case bytes.HasPrefix(b[i:], []byte("true")) || bytes.HasPrefix(b[i:], []byte("null")):
			isText = false
			i += 4
		case bytes.HasPrefix(b[i:], []byte("false")):
			isText = false
			i += 5
		default:
			return texts, false
		}
		for s := range nSlots {
			if p.flat.want[s] && !found[s] && string(key) == p.flat.names[s] {
				if !isText {
					return texts, false
				}
				found[s], texts[s] = true, val
				span.slots |= 1 << s
			}
		}
		if spans != nil && isText {
			*spans = append(*spans, span)
		}
		i = jsonSpace(b, i)
		if i == len(b) {
			return texts, false
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return texts, false
		}
		i = jsonSpace(b, i+1)
	}
	if jsonSpace(b, i+1) != len(b) || found != p.flat.want {
		return texts, false
	}
	return texts, true
}

// flatLayout is what fastJSON needs of the fields, worked out once.
type flatLayout struct {
	ready, ok bool
	timeOnly  bool // no end or duration field
	names     [nSlots]string
	want      [nSlots]bool
}

// jsonSpace skips JSON whitespace from b[i] on.
func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonPlainString reads a string's text up to its closing quote; n is how
// many bytes that took, quote included, or -1 for a string with an escape
// or without an end.
func jsonPlainString(b []byte) (s []byte, n int) {
	for j, c := range b {
		switch c {
		case '"':
			return b[:j], j + 1
		case '\\':
			return nil, -1
		}
	}
	return nil, -1
}

// jsonNumber returns the length of the number at the start of b in the
// plain form -?digits(.digits)?, followed by the end, a space, a comma or
// a brace; 0 for anything else.
func jsonNumber(b []byte) int {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0
		}
	}
	if i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r', ',', '}':
		default:
			return 0
		}
	}
	return i
}

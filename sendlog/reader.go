package sendlog

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// Reader reads one send log. Lines are parsed ahead of the caller by
// Options.Workers goroutines, in chunks, and handed out in file order. A
// regular file (an *os.File) is mapped read-only on Linux and its chunks
// cut from the mapping; Close, or reading to the end, unmaps it. A Reader
// is not safe for concurrent use; call Close when done early.
type Reader struct {
	name    string
	opt     Options
	src     io.Reader
	br      *bufio.Reader
	lp      *lineParser
	started bool
	headers int64
	// headBreaks counts the line breaks inside the quotes of the first
	// CSV record, a header or not.
	headBreaks int
	timeName   string // the time column's or field's name, when it has one
	timeByName bool   // and it was chosen by that name, beyond ts, time and timestamp

	pipe     *pipeline
	cur      *batch
	idx      int
	base     int64 // lines before the current batch
	lines    int64
	sends    int64
	skipped  int64
	filtered int64
	first    []*InputError
	done     bool
	err      error
}

// NewReader reads the log in r; name is used in errors. Gzip input is
// recognised by its magic bytes and decompressed.
func NewReader(name string, r io.Reader, opt Options) *Reader {
	lp := &lineParser{tp: *newTimeParser(opt.Unit), durUnit: opt.DurationUnit}
	lp.tp.zone = opt.Zone
	if opt.HasStatus() {
		lp.statusFilter = opt.AccessFilter
	}
	for s := range lp.cols {
		lp.cols[s] = -1
	}
	return &Reader{name: name, opt: opt, src: r, lp: lp}
}

// Name returns the name the reader reports in errors.
func (r *Reader) Name() string { return r.name }

// Format returns the layout in use, once the first record has been read.
func (r *Reader) Format() Format { return r.lp.format }

// Detected says how timestamps were read ("decimal seconds", "ns (detected
// from 19-digit integers…)"), for reports.
func (r *Reader) Detected() string { return r.lp.tp.Detected() }

// Skipped returns how many lines SkipInvalid passed over, and the first few
// of them.
func (r *Reader) Skipped() (int64, []*InputError) { return r.skipped, r.first }

// Filtered returns how many access-log requests the filter left out.
func (r *Reader) Filtered() int64 { return r.filtered }

// Lines returns how many lines have been read.
func (r *Reader) Lines() int64 { return r.lines }

// Sends returns how many records have been returned.
func (r *Reader) Sends() int64 { return r.sends }

// Column describes the time column or field in use, for reports.
func (r *Reader) Column() string {
	switch r.lp.format {
	case FormatCSV:
		return "column " + strconv.Itoa(r.lp.cols[slotTime]+1)
	case FormatJSONL:
		return "field " + strings.Join(r.lp.paths[slotTime], ".")
	}
	return ""
}

func (r *Reader) errorf(line int64, text []byte, format string, args ...any) *InputError {
	return &InputError{File: r.name, Line: line, Text: string(text), Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next send, or io.EOF after the last. A log with no sends
// at all is an *InputError, not an empty result.
func (r *Reader) Next() (Record, error) {
	for r.cur == nil || r.idx >= len(r.cur.At) {
		if _, err := r.nextBatch(); err != nil {
			return Record{}, err
		}
	}
	b, i := r.cur, r.idx
	r.idx++
	rec := Record{At: b.At[i], Line: b.Line[i], Key: b.Key(i)}
	if b.End != nil {
		rec.End = b.End[i]
	}
	if b.Status != nil {
		rec.Status = b.Status[i]
	}
	if b.Texts != nil {
		rec.Texts = b.Texts[i]
	}
	if b.Settled != nil {
		rec.Settled = b.Settled[i]
		for u := range b.Actual {
			if b.Actual[u] != nil {
				rec.Actual[u] = b.Actual[u][i]
			}
		}
	}
	for u := range b.Cost {
		if b.Cost[u] != nil {
			rec.Cost[u] = b.Cost[u][i]
		}
	}
	return rec, nil
}

// NextBatch returns the next run of sends, in file order, or io.EOF after
// the last. It is the fast way through a large log; do not mix it with
// Next on one Reader.
func (r *Reader) NextBatch() (*Batch, error) {
	b, err := r.nextBatch()
	if err != nil {
		return nil, err
	}
	r.idx = len(b.At)
	return &b.Batch, nil
}

// nextBatch moves to the next batch that holds sends.
func (r *Reader) nextBatch() (*batch, error) {
	if r.done {
		return nil, r.err
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			return nil, r.stop(err)
		}
	}
	for {
		if r.cur != nil {
			if err := r.endBatch(); err != nil {
				return nil, r.stop(err)
			}
		}
		b, ok := r.pipe.next()
		if !ok {
			return nil, r.stop(r.finish())
		}
		r.cur, r.idx = b, 0
		if err := r.holdUnit(b); err != nil {
			return nil, r.stop(err)
		}
		for i := range b.Line {
			b.Line[i] += r.base
		}
		r.sends += int64(len(b.At))
		if len(b.At) > 0 {
			return b, nil
		}
	}
}

// holdUnit holds a chunk that detected its own unit to the unit of the
// chunks before it.
func (r *Reader) holdUnit(b *batch) error {
	u, tp := b.unit, &r.lp.tp
	switch {
	case u.unit == UnitAuto || u.unit == tp.unit:
	case tp.unit == UnitAuto:
		tp.unit, tp.digits = u.unit, u.digits
		if tp.detected == "" {
			tp.detected = u.detected
		}
	default:
		return r.errorf(r.base+u.line, []byte(u.text), "%v", mixedUnits(u.digits, tp.unit))
	}
	return nil
}

// endBatch accounts for the batch just handed out, and returns its error.
func (r *Reader) endBatch() error {
	b := r.cur
	r.cur = nil
	for _, e := range b.skips {
		if len(r.first) < 5 {
			e.File, e.Line = r.name, e.Line+r.base
			r.first = append(r.first, e)
		}
	}
	r.skipped += b.skipped
	r.filtered += b.filtered
	if b.err != nil {
		b.err.File = r.name
		if b.err.Line > 0 {
			b.err.Line += r.base
		}
		return b.err
	}
	r.base += b.lines
	r.lines = r.base
	if b.readErr == errTruncated {
		return r.errorf(0, nil, "truncated gzip data: the stream is cut off after line %d", r.base)
	}
	if b.readErr != nil {
		return r.errorf(0, nil, "read error after line %d: %v", r.base, b.readErr)
	}
	r.pipe.recycle(b)
	return nil
}

func (r *Reader) stop(err error) error {
	r.done, r.err = true, err
	if r.pipe != nil {
		r.pipe.close()
	}
	return err
}

// Close stops the goroutines parsing ahead. It is safe to call more than once.
func (r *Reader) Close() error {
	if !r.done {
		r.stop(io.EOF)
	}
	return nil
}

func (r *Reader) finish() error {
	if r.sends > 0 {
		return io.EOF
	}
	switch {
	case r.skipped > 0:
		return r.errorf(0, nil, "no valid sends (%d invalid lines skipped; the first at line %d: %s)", r.skipped, r.first[0].Line, r.first[0].Msg)
	case r.headers > 0 && r.lines <= r.headers:
		return r.errorf(0, nil, "no sends: only a header line")
	case r.filtered > 0:
		return r.errorf(0, nil, "no sends: the filters left out all %d requests", r.filtered)
	case r.lines > 0:
		return r.errorf(0, nil, "no sends: only blank or comment lines")
	}
	return r.errorf(0, nil, "no sends: the input is empty")
}

// start detects compression and the layout, reads the header if any, fixes
// the timestamp unit from the first lines, and starts parsing ahead.
func (r *Reader) start() error {
	br := bufio.NewReaderSize(r.src, 64<<10)
	gz := false
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return r.errorf(0, nil, "truncated gzip data: the stream ends inside its header")
			}
			return r.errorf(0, nil, "bad gzip data: %v", err)
		}
		br = bufio.NewReaderSize(gzipSource{zr}, 64<<10)
		gz = true
	}
	// A byte-order mark says only that the text is UTF-8: drop it, whatever
	// the layout.
	if b, _ := br.Peek(len(utf8BOM)); string(b) == utf8BOM {
		br.Discard(len(utf8BOM))
	}
	r.br = br
	lp := r.lp
	lp.format = r.opt.Format
	if lp.format == FormatAuto {
		lp.format = r.sniff()
	}
	if err := r.checkCosts(); err != nil {
		return err
	}
	switch lp.format {
	case FormatCSV:
		if err := r.startCSV(); err != nil {
			return err
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
	r.detectUnit()
	lp.chunkUnit = !lp.tp.given && lp.tp.unit == UnitAuto
	workers := r.opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var m *mapping
	if f, ok := r.src.(*os.File); ok && !gz {
		m = mapInput(f, br)
	}
	r.pipe = startPipeline(r.br, m, lp, r.opt.SkipInvalid, workers)
	return nil
}

// mapInput maps f, of which br has read ahead, when it is a regular file
// large enough (mapMin), so that the pipeline cuts its chunks from the
// mapping; nil when it reads f instead.
func mapInput(f *os.File, br *bufio.Reader) *mapping {
	data := mapFile(f, mapMin)
	if data == nil {
		return nil
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if pos := off - int64(br.Buffered()); err == nil && pos >= 0 && off <= int64(len(data)) {
		return &mapping{data: data, pos: int(pos), f: f}
	}
	unmapFile(data)
	return nil
}

const utf8BOM = "\ufeff"

// errTruncated is a compressed stream that ends before its end marker.
var errTruncated = errors.New("truncated gzip data")

// gzipSource tells a gzip stream cut short from one that ended: the gzip
// reader reports the first as io.ErrUnexpectedEOF, which io.ReadFull and
// friends would take for a normal end.
type gzipSource struct{ zr *gzip.Reader }

func (g gzipSource) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err == io.ErrUnexpectedEOF {
		err = errTruncated
	}
	return n, err
}

// firstLines returns up to 64 KiB of the lines ahead, without consuming them.
func (r *Reader) firstLines() [][]byte {
	peek, _ := r.br.Peek(64 << 10)
	var lines [][]byte
	for len(peek) > 0 {
		i := bytes.IndexByte(peek, '\n')
		if i < 0 {
			lines = append(lines, trimEOL(peek))
			break
		}
		lines = append(lines, trimEOL(peek[:i+1]))
		peek = peek[i+1:]
	}
	return lines
}

// detectUnit fixes the unit of integer timestamps from the first lines, so
// that every parsing goroutine holds later lines to the same unit.
func (r *Reader) detectUnit() {
	if r.lp.tp.given {
		return
	}
	probe := r.lp.clone()
	for _, line := range r.firstLines() {
		if _, err := probe.parse(line); err == nil && probe.tp.unit != UnitAuto {
			break
		}
	}
	r.lp.tp = probe.tp
}

// sniff picks the format by extension, else by the first non-blank line.
func (r *Reader) sniff() Format {
	name := strings.TrimSuffix(strings.ToLower(r.name), ".gz")
	switch filepath.Ext(name) {
	case ".csv":
		return FormatCSV
	case ".jsonl", ".ndjson", ".json":
		return FormatJSONL
	}
	for _, line := range r.firstLines() {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		switch {
		case line[0] == '{':
			return FormatJSONL
		case bytes.IndexByte(line, ',') >= 0:
			return FormatCSV
		}
		return FormatPlain
	}
	return FormatPlain
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// consumeLine drops the next line (a header or a blank line before it).
func (r *Reader) consumeLine() error {
	for {
		_, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		r.base++
		if err != nil && err != io.EOF {
			return r.errorf(r.base, nil, "read error: %v", err)
		}
		return nil
	}
}

// timeBases are the names taken for the time column or field when none is
// given, in order of preference; each may end in a unit (timeSuffixes).
var timeBases = []string{"ts", "time", "timestamp", "sent_at", "created_at"}

var timeSuffixes = []struct {
	s string
	u Unit
}{{"", UnitAuto}, {"_ms", UnitMillis}, {"_us", UnitMicros}, {"_ns", UnitNanos}, {"_s", UnitSeconds}}

// defaultTimeNames are the names timeBases and timeSuffixes make, in order.
var defaultTimeNames = func() []string {
	var names []string
	for _, b := range timeBases {
		for _, sf := range timeSuffixes {
			names = append(names, b+sf.s)
		}
	}
	return names
}()

// legacyNames are the default names that say nothing beyond "the time".
var legacyNames = map[string]bool{"ts": true, "time": true, "timestamp": true}

// nameUnit returns the unit a column or field name ends in ("sent_at_ms"),
// or UnitAuto.
func nameUnit(name string) Unit {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, sf := range timeSuffixes[1:] {
		if len(name) > len(sf.s) && strings.HasSuffix(name, sf.s) {
			return sf.u
		}
	}
	return UnitAuto
}

// unitFromName reads timestamps in the unit the time column's name ends
// in, unless a unit is given, and notes the choice for Chosen.
func (r *Reader) unitFromName(name string, byDefault bool) {
	name = strings.TrimSpace(name)
	r.timeName, r.timeByName = name, byDefault && !legacyNames[strings.ToLower(name)]
	if u := nameUnit(name); u != UnitAuto && r.opt.Unit == UnitAuto {
		r.lp.tp = timeParser{unit: u, given: true, from: name}
	}
}

// Chosen says which time column or field, and which unit, were taken from
// their names rather than given (`time from column 2 "sent_at_ms" (by its
// name), in ms (by its suffix)`), or "" when nothing was chosen that way.
func (r *Reader) Chosen() string {
	s := ""
	if r.timeByName {
		s = fmt.Sprintf("time from field %q (by its name)", r.timeName)
		if r.lp.format == FormatCSV {
			s = fmt.Sprintf("time from column %d %q (by its name)", r.lp.cols[slotTime]+1, r.timeName)
		}
	}
	switch tp := r.lp.tp; {
	case tp.from == "":
	case s != "":
		s += fmt.Sprintf(", in %s (by its suffix)", tp.unit)
	default:
		s = fmt.Sprintf("time in %s (by the suffix of %q)", tp.unit, tp.from)
	}
	return s
}

// startCSV reads the first non-blank line: a header, unless its time field
// already parses as a timestamp, in which case it is data and stays.
func (r *Reader) startCSV() error {
	for {
		if peek, _ := r.br.Peek(1); len(peek) == 0 {
			return nil // empty: finish reports it
		}
		line, err := r.peekLine()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			line, r.headBreaks = r.peekRecord(line)
			return r.chooseColumns(line)
		}
		if err := r.consumeLine(); err != nil {
			return err
		}
	}
}

// peekLine returns the next line without consuming it.
func (r *Reader) peekLine() ([]byte, error) {
	for n := 4096; ; n *= 2 {
		buf, err := r.br.Peek(n)
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			return trimEOL(buf[:i+1]), nil
		}
		if err != nil {
			if err == io.EOF || len(buf) == 0 {
				return trimEOL(buf), nil
			}
			return nil, r.errorf(r.base+1, buf[:min(len(buf), 40)], "first line longer than %d bytes", len(buf))
		}
	}
}

// peekRecord extends the first line to the CSV record it starts, when
// its quotes hold line breaks, and returns how many; a record longer than
// the buffer stays its first line, which then fails as a header.
func (r *Reader) peekRecord(line []byte) ([]byte, int) {
	if bytes.IndexByte(line, '"') < 0 {
		return line, 0
	}
	buf, err := r.br.Peek(r.br.Size())
	if n, breaks := csvRecordLen(buf); n >= 0 && (n < len(buf) || err != nil) {
		return trimEOL(buf[:n]), breaks
	}
	return line, 0
}

// findColumn resolves, in the header rec read from line, the column a
// setting names (want: a header name or a 1-based index; defaults when
// empty); setting is how errors name it: "sendlog.Options.TimeCol 5", or
// "sendlog.Options.Costs tokens=5" for a unit's cost column, as the
// command line gives it. -1 means the setting names none.
func (r *Reader) findColumn(rec []string, line []byte, setting, want string, defaults []string) (int, error) {
	if want == "" && defaults == nil {
		return -1, nil
	}
	if n, err := strconv.Atoi(want); err == nil {
		if n < 1 || n > len(rec) {
			return -1, r.errorf(r.base+1, line, "%s: the first line has %d columns", setting, len(rec))
		}
		return n - 1, nil
	}
	names := defaults
	if want != "" {
		names = []string{want}
	}
	for _, name := range names {
		for i, h := range rec {
			if strings.EqualFold(strings.TrimSpace(h), name) {
				return i, nil
			}
		}
	}
	if want != "" && strings.HasPrefix(setting, "sendlog.Options.Costs ") {
		return -1, r.errorf(r.base+1, line, "%s: no column named %q in the header", setting, want)
	}
	if want != "" {
		return -1, r.errorf(r.base+1, line, "no column named %q in the header", want)
	}
	r.lp.timeFallback = true // the only find with defaults
	return 0, nil
}

// chooseColumns resolves the CSV columns from the first line.
func (r *Reader) chooseColumns(line []byte) error {
	rec, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return r.errorf(r.base+1, line, "bad CSV header: %v", err)
	}
	find := func(setting, want string, defaults []string) (int, error) {
		return r.findColumn(rec, line, setting, want, defaults)
	}
	lp := r.lp
	var errs [nSlots]error
	opt := func(field, want string) string { return "sendlog.Options." + field + " " + want }
	lp.cols[slotTime], errs[slotTime] = find(opt("TimeCol", r.opt.TimeCol), r.opt.TimeCol, defaultTimeNames)
	lp.cols[slotKey], errs[slotKey] = find(opt("KeyCol", r.opt.KeyCol), r.opt.KeyCol, nil)
	lp.cols[slotEnd], errs[slotEnd] = find(opt("EndCol", r.opt.EndCol), r.opt.EndCol, nil)
	lp.cols[slotDur], errs[slotDur] = find(opt("DurationCol", r.opt.DurationCol), r.opt.DurationCol, nil)
	lp.cols[slotStatus], errs[slotStatus] = find(opt("StatusCol", r.opt.StatusCol), r.opt.StatusCol, nil)
	lp.cols[slotSettled], errs[slotSettled] = find(opt("SettledCol", r.opt.SettledCol), r.opt.SettledCol, nil)
	for i, c := range r.opt.Costs {
		lp.cols[slotCost+i], errs[slotCost+i] = find(opt("Costs", c.Unit+"="+c.Col), c.Col, nil)
		errs[slotCost+i] = withCostFix(errs[slotCost+i], c.Unit, c.Col, rec)
		lp.cols[slotActual+i], errs[slotActual+i] = find(opt("Costs", c.Unit+" actual "+c.ActualCol), c.ActualCol, nil)
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	lp.textCols = textColumns(rec, r.opt.Texts)
	probe := newTimeParser(r.opt.Unit)
	probe.zone = r.opt.Zone
	if c := lp.cols[slotTime]; c < len(rec) {
		if _, err := probe.parse([]byte(strings.TrimSpace(rec[c]))); err == nil {
			return nil // no header: the line is data
		}
	}
	r.headers++
	lp.header = rec
	if c := lp.cols[slotTime]; c < len(rec) {
		r.unitFromName(rec[c], r.opt.TimeCol == "" && !r.lp.timeFallback)
	}
	for range r.headBreaks {
		if err := r.consumeLine(); err != nil {
			return err
		}
	}
	return r.consumeLine()
}

// checkCosts refuses cost sources the format cannot give, and notes the
// units for the line parser.
func (r *Reader) checkCosts() error {
	costs := r.opt.Costs
	if len(costs) == 0 && r.opt.HasSettled() {
		return r.errorf(0, nil, "a settlement replaces estimated costs with actual ones: name the costs (sendlog.Options.Costs)")
	}
	if len(costs) == 0 {
		return nil
	}
	if len(costs) > MaxCosts {
		return r.errorf(0, nil, "%d cost units: at most %d", len(costs), MaxCosts)
	}
	for _, c := range costs {
		switch r.lp.format {
		case FormatCSV:
			if c.Col == "" {
				return r.errorf(0, nil, "no CSV column named for the %s cost (sendlog.Options.Costs)", c.Unit)
			}
		case FormatJSONL:
			if c.Field == "" {
				return r.errorf(0, nil, "no JSON field named for the %s cost (sendlog.Options.Costs)", c.Unit)
			}
		default:
			return r.errorf(0, nil, "a %s log carries no %s cost: costs are read from CSV columns or JSON-lines fields", r.lp.format, c.Unit)
		}
		r.lp.costUnits = append(r.lp.costUnits, c.Unit)
		if (c.ActualCol != "" || c.ActualField != "") && !r.opt.HasSettled() {
			return r.errorf(0, nil, "an actual %s cost is read with the instant of its settlement: name it (sendlog.Options.SettledCol or SettledField)", c.Unit)
		}
	}
	return nil
}

// startJSON fixes the JSON fields, choosing a default time field from the
// first record that parses.
func (r *Reader) startJSON() {
	lp := r.lp
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ".")
	}
	lp.paths[slotTime] = split(r.opt.TimeField)
	lp.paths[slotKey] = split(r.opt.KeyField)
	lp.paths[slotEnd] = split(r.opt.EndField)
	lp.paths[slotDur] = split(r.opt.DurationField)
	lp.paths[slotStatus] = split(r.opt.StatusField)
	lp.paths[slotSettled] = split(r.opt.SettledField)
	for i, c := range r.opt.Costs {
		lp.paths[slotCost+i] = split(c.Field)
		lp.paths[slotActual+i] = split(c.ActualField)
	}
	lp.textPaths = make([][]string, len(r.opt.Texts))
	for i, t := range r.opt.Texts {
		lp.textPaths[i] = split(t.Field)
	}
	if p := lp.paths[slotTime]; p != nil {
		r.unitFromName(p[len(p)-1], false)
		return
	}
	var p fastjson.Parser
	for _, line := range r.firstLines() {
		v, err := p.ParseBytes(line)
		if err != nil {
			continue
		}
		for _, name := range defaultTimeNames {
			if v.Exists(name) {
				lp.paths[slotTime] = []string{name}
				r.unitFromName(name, true)
				return
			}
		}
		return
	}
}

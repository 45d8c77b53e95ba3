package sendlog

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fastjson"
)

// Format is a send-log layout.
type Format int

const (
	FormatAuto  Format = iota // by file extension, else by the first line
	FormatPlain               // one timestamp a line; blank and # lines skipped
	FormatCSV                 // comma-separated, usually with a header
	FormatJSONL               // one JSON object a line
)

var formatNames = [...]string{"auto", "plain", "csv", "jsonl"}

func (f Format) String() string { return formatNames[f] }

// ParseFormat reads auto, plain, csv or jsonl.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	if s == "ndjson" || s == "json" {
		return FormatJSONL, nil
	}
	return 0, fmt.Errorf("input format %q: want auto, plain, csv or jsonl", s)
}

// MaxLine is the longest line a reader accepts, in bytes.
const MaxLine = 1 << 20

// Options says how to read a log.
type Options struct {
	Format Format
	// TimeCol is the CSV time column: a header name, or a 1-based index.
	// Empty picks a column named ts, time or timestamp, else the first.
	TimeCol string
	// TimeField is the JSON time field, dotted for nesting ("req.ts").
	// Empty picks ts, time or timestamp.
	TimeField string
	Unit      Unit
	// SkipInvalid counts bad lines and goes on instead of failing.
	SkipInvalid bool
}

// Record is one send read from a log.
type Record struct {
	At   int64 // nanoseconds
	Line int64 // 1-based line number in its file
}

// Reader reads one send log. It is not safe for concurrent use.
type Reader struct {
	name    string
	opt     Options
	src     io.Reader
	br      *bufio.Reader
	tp      *timeParser
	format  Format
	line    int64
	sends   int64
	skipped int64
	first   []*InputError // the first few skipped lines, for reports
	started bool
	headers int64 // header lines read
	col     int   // CSV column, 0-based
	path    []string
	jp      fastjson.Parser
	numBuf  []byte
	done    bool
}

// NewReader reads the log in r; name is used in errors. Gzip input is
// recognised by its magic bytes and decompressed.
func NewReader(name string, r io.Reader, opt Options) *Reader {
	return &Reader{name: name, opt: opt, src: r, tp: newTimeParser(opt.Unit), col: -1}
}

// Format returns the layout in use, once the first record has been read.
func (r *Reader) Format() Format { return r.format }

// Detected says how timestamps were read ("decimal seconds", "ns (detected
// from 19-digit integers…)"), for reports.
func (r *Reader) Detected() string { return r.tp.Detected() }

// Skipped returns how many lines SkipInvalid passed over, and the first few
// of them.
func (r *Reader) Skipped() (int64, []*InputError) { return r.skipped, r.first }

// Lines returns how many lines have been read.
func (r *Reader) Lines() int64 { return r.line }

// Column describes the time column or field in use, for reports.
func (r *Reader) Column() string {
	switch r.format {
	case FormatCSV:
		return "column " + strconv.Itoa(r.col+1)
	case FormatJSONL:
		return "field " + strings.Join(r.path, ".")
	}
	return ""
}

func (r *Reader) errorf(line int64, text []byte, format string, args ...any) *InputError {
	return &InputError{File: r.name, Line: line, Text: string(text), Msg: fmt.Sprintf(format, args...)}
}

// Next returns the next send, or io.EOF after the last. A log with no sends
// at all is an *InputError, not an empty result.
func (r *Reader) Next() (Record, error) {
	if r.done {
		return Record{}, io.EOF
	}
	if !r.started {
		if err := r.start(); err != nil {
			r.done = true
			return Record{}, err
		}
	}
	for {
		b, err := r.readLine()
		if err == io.EOF {
			r.done = true
			return Record{}, r.finish()
		}
		if err != nil {
			if ie, ok := err.(*InputError); ok && r.opt.SkipInvalid {
				r.skip(ie)
				continue
			}
			r.done = true
			return Record{}, err
		}
		at, err := r.parseLine(b)
		if err == errSkipLine {
			continue
		}
		if err != nil {
			ie := r.errorf(r.line, b, "%v", err)
			if r.opt.SkipInvalid {
				r.skip(ie)
				continue
			}
			r.done = true
			return Record{}, ie
		}
		r.sends++
		return Record{At: at, Line: r.line}, nil
	}
}

func (r *Reader) skip(e *InputError) {
	r.skipped++
	if len(r.first) < 5 {
		r.first = append(r.first, e)
	}
}

func (r *Reader) finish() error {
	if r.sends > 0 {
		return io.EOF
	}
	switch {
	case r.skipped > 0:
		return r.errorf(0, nil, "no valid sends (%d invalid lines skipped; the first at line %d: %s)", r.skipped, r.first[0].Line, r.first[0].Msg)
	case r.headers > 0:
		return r.errorf(0, nil, "no sends: only a header line")
	case r.line > 0:
		return r.errorf(0, nil, "no sends: only blank or comment lines")
	}
	return r.errorf(0, nil, "no sends: the input is empty")
}

var errSkipLine = errors.New("skip line")

// start detects compression and the format, and reads the header if any.
func (r *Reader) start() error {
	r.started = true
	br := bufio.NewReaderSize(r.src, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return r.errorf(0, nil, "bad gzip data: %v", err)
		}
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	r.br = br
	r.format = r.opt.Format
	if r.format == FormatAuto {
		r.format = r.sniff()
	}
	switch r.format {
	case FormatCSV:
		return r.startCSV()
	case FormatJSONL:
		if r.opt.TimeField != "" {
			r.path = strings.Split(r.opt.TimeField, ".")
		}
	}
	return nil
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
	peek, _ := r.br.Peek(4096)
	for len(peek) > 0 {
		line := peek
		if i := bytes.IndexByte(peek, '\n'); i >= 0 {
			line, peek = peek[:i], peek[i+1:]
		} else {
			peek = nil
		}
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

// readLine returns the next line without its line ending. Lines longer than
// MaxLine and lines holding NUL bytes are *InputErrors.
func (r *Reader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return r.readLong(b)
	}
	if err != nil {
		if err != io.EOF {
			return nil, r.errorf(r.line+1, nil, "read error: %v", err)
		}
		if len(b) == 0 {
			return nil, io.EOF
		}
	}
	r.line++
	b = trimEOL(b)
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, r.errorf(r.line, nil, "binary data (a NUL byte): this does not look like a text send log")
	}
	return b, nil
}

// readLong reads a line longer than the buffer: up to MaxLine it is
// returned whole; past that it is drained and refused.
func (r *Reader) readLong(b []byte) ([]byte, error) {
	long := append([]byte(nil), b...)
	var err error
	for {
		b, err = r.br.ReadSlice('\n')
		if len(long) <= MaxLine {
			long = append(long, b...)
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	if err != nil && err != io.EOF {
		return nil, r.errorf(r.line+1, nil, "read error: %v", err)
	}
	r.line++
	if len(long) > MaxLine {
		return nil, r.errorf(r.line, long[:40], "line longer than %d bytes", MaxLine)
	}
	long = trimEOL(long)
	if bytes.IndexByte(long, 0) >= 0 {
		return nil, r.errorf(r.line, nil, "binary data (a NUL byte): this does not look like a text send log")
	}
	return long, nil
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

// parseLine returns the timestamp on one data line.
func (r *Reader) parseLine(b []byte) (int64, error) {
	switch r.format {
	case FormatCSV:
		if len(bytes.TrimSpace(b)) == 0 {
			return 0, errSkipLine
		}
		f, ok := csvField(b, r.col)
		if !ok {
			return 0, fmt.Errorf("no column %d", r.col+1)
		}
		return r.tp.parse(bytes.TrimSpace(f))
	case FormatJSONL:
		return r.parseJSON(b)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == '#' {
		return 0, errSkipLine
	}
	return r.tp.parse(b)
}

// csvField returns field col of a CSV line without allocating; a quoted
// field comes back without its quotes.
func csvField(b []byte, col int) ([]byte, bool) {
	for i := 0; ; i++ {
		var f []byte
		if len(b) > 0 && b[0] == '"' {
			end := 1
			for end < len(b) {
				if b[end] == '"' {
					if end+1 < len(b) && b[end+1] == '"' {
						end += 2
						continue
					}
					break
				}
				end++
			}
			if end >= len(b) {
				return b[1:], i == col // unterminated quote: the rest of the line
			}
			f, b = b[1:end], b[end+1:]
			if j := bytes.IndexByte(b, ','); j >= 0 {
				b = b[j:]
			} else {
				b = b[len(b):]
			}
		} else if j := bytes.IndexByte(b, ','); j >= 0 {
			f, b = b[:j], b[j:]
		} else {
			f, b = b, b[len(b):]
		}
		if i == col {
			return f, true
		}
		if len(b) == 0 {
			return nil, false
		}
		b = b[1:] // the comma
	}
}

var defaultTimeNames = []string{"ts", "time", "timestamp"}

// startCSV reads the first line: a header, unless its time field already
// parses as a timestamp, in which case it is data and is read again.
func (r *Reader) startCSV() error {
	for {
		peek, err := r.br.Peek(1)
		if len(peek) == 0 || err != nil {
			return nil // empty: finish reports it
		}
		line, err := r.peekLine()
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return r.chooseColumn(line)
		}
		if _, err := r.readLine(); err != nil {
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
		if err != nil { // EOF, or the buffer is full
			if err == io.EOF || len(buf) == 0 {
				return trimEOL(buf), nil
			}
			return nil, r.errorf(r.line+1, buf[:40], "first line longer than %d bytes", len(buf))
		}
	}
}

func (r *Reader) chooseColumn(line []byte) error {
	rec, err := csv.NewReader(bytes.NewReader(line)).Read()
	if err != nil {
		return r.errorf(r.line+1, line, "bad CSV header: %v", err)
	}
	isData := func(col int) bool {
		if col >= len(rec) {
			return false
		}
		probe := newTimeParser(r.opt.Unit)
		_, err := probe.parse([]byte(strings.TrimSpace(rec[col])))
		return err == nil
	}
	want := r.opt.TimeCol
	if n, err := strconv.Atoi(want); err == nil {
		if n < 1 || n > len(rec) {
			return r.errorf(r.line+1, line, "--time-col %d: the first line has %d columns", n, len(rec))
		}
		r.col = n - 1
	} else if want != "" {
		for i, h := range rec {
			if strings.EqualFold(strings.TrimSpace(h), want) {
				r.col = i
			}
		}
		if r.col < 0 {
			return r.errorf(r.line+1, line, "no column named %q in the header", want)
		}
	} else {
		for _, name := range defaultTimeNames {
			for i, h := range rec {
				if r.col < 0 && strings.EqualFold(strings.TrimSpace(h), name) {
					r.col = i
				}
			}
		}
		if r.col < 0 {
			r.col = 0
		}
	}
	if isData(r.col) {
		return nil // no header: the line is read again as data
	}
	if _, err := r.readLine(); err != nil {
		return err
	}
	r.headers++
	return nil
}

// parseJSON returns the time field of one JSON-lines record.
func (r *Reader) parseJSON(b []byte) (int64, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return 0, errSkipLine
	}
	v, err := r.jp.ParseBytes(b)
	if err != nil {
		return 0, fmt.Errorf("bad JSON: %v", err)
	}
	if r.path == nil {
		for _, name := range defaultTimeNames {
			if v.Exists(name) {
				r.path = []string{name}
				break
			}
		}
		if r.path == nil {
			return 0, fmt.Errorf("no time field (ts, time or timestamp); set --time-field")
		}
	}
	f := v.Get(r.path...)
	if f == nil {
		return 0, fmt.Errorf("no field %q", strings.Join(r.path, "."))
	}
	switch f.Type() {
	case fastjson.TypeNumber:
		r.numBuf = f.MarshalTo(r.numBuf[:0])
		return r.tp.parse(r.numBuf)
	case fastjson.TypeString:
		s, _ := f.StringBytes()
		return r.tp.parse(bytes.TrimSpace(s))
	case fastjson.TypeNull:
		return 0, errEmpty
	}
	return 0, fmt.Errorf("field %q is a JSON %s, not a timestamp", strings.Join(r.path, "."), f.Type())
}

package sendlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"runtime/debug"
	"sync"
)

// chunkSize is how much input one parsing task takes: large enough to make
// the hand-off cheap, small enough to keep memory flat.
const chunkSize = 256 << 10

// chunk is a run of whole lines handed to a parsing goroutine.
type chunk struct {
	seq     int
	data    []byte
	tooLong bool  // data is the start of one line longer than MaxLine
	endless bool  // and the line goes on past MaxSkip: not even --skip-invalid reads on
	readErr error // the source failed after data
	mapped  bool  // data is part of the file's mapping, not a buffer
	end     int   // with mapped: where data ends in the mapping
}

// batch is a parsed chunk. Line numbers in it count from the chunk's first
// line; the Reader adds the lines before it.
type batch struct {
	Batch
	seq      int
	filtered int64 // access-log lines a filter left out
	lines    int64
	skipped  int64
	skips    []*InputError
	err      *InputError // parsing stopped here
	readErr  error       // the source failed after this batch
	data     []byte      // the chunk, recycled with the batch
	unit     unitSeen    // with lineParser.chunkUnit: the unit this chunk's integers were read in
	mapped   bool        // data is part of the file's mapping
	end      int         // with mapped: where data ends in the mapping
}

// unitSeen is where a chunk's integer timestamps fixed their unit.
type unitSeen struct {
	unit     Unit // UnitAuto when the chunk has no integer timestamp
	digits   int
	line     int64
	text     string
	detected string
}

// Batch is a run of sends in file order, parsed ahead of the caller. Its
// slices are valid until the next call to the Reader's Next or NextBatch.
type Batch struct {
	At   []int64
	End  []int64 // filled when the options name an end or a duration
	Line []int64 // 1-based line numbers

	// Keys are stored once per batch: keyIdx[i] is send i's index among
	// the batch's distinct keys, whose bytes are keys[keyOff[j]:][:keyLen[j]].
	keyIdx         []int32
	keyOff, keyLen []int32
	keys           []byte
}

// Len returns the number of sends in the batch.
func (b *Batch) Len() int { return len(b.At) }

// Key returns send i's key, or nil when the options name no key column.
func (b *Batch) Key(i int) []byte {
	if b.keyIdx == nil {
		return nil
	}
	return b.DistinctKey(int(b.keyIdx[i]))
}

// KeyIndexes returns, for each send, the index of its key among the batch's
// distinct keys (see DistinctKey), or nil when the options name no key
// column. A consumer that groups by key looks up each distinct key once
// per batch rather than once per send.
func (b *Batch) KeyIndexes() []int32 { return b.keyIdx }

// NumKeys returns how many distinct keys the batch holds.
func (b *Batch) NumKeys() int { return len(b.keyOff) }

// DistinctKey returns the batch's j-th distinct key, in order of first
// appearance.
func (b *Batch) DistinctKey(j int) []byte {
	o, n := b.keyOff[j], b.keyLen[j]
	return b.keys[o : o+n : o+n]
}

func (b *Batch) reset() {
	b.At, b.End, b.Line = b.At[:0], b.End[:0], b.Line[:0]
	b.keyIdx, b.keyOff, b.keyLen, b.keys = b.keyIdx[:0], b.keyOff[:0], b.keyLen[:0], b.keys[:0]
}

// pipeline reads chunks in one goroutine, parses them in several, and hands
// batches back in input order.
type pipeline struct {
	work    chan chunk
	results chan *batch
	quit    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	pending map[int]*batch
	want    int
	open    int // chunks sent and not yet received back
	eof     chan int
	total   int // chunks the producer made, once eof has been read
	// Chunk buffers and batches are reused through free lists as long as
	// the most that can be in flight: a sync.Pool, emptied only by the
	// collector, let them pile up between collections on long inputs.
	bufs    chan []byte
	batches chan *batch
	seq     int // the producer's next chunk

	// A regular file is cut into chunks straight from its mapping (see
	// produceMapped); m is nil when the input is read.
	m        []byte
	mpos     int      // where the lines not yet read start in m
	f        *os.File // the file, read on past the mapping's last full chunk
	released int      // m's pages up to here are given back
	mapped   int      // chunks cut from m, for tests
	csv      bool     // chunks end at CSV records, not lines (see cut)
}

// mapping is a Reader's input file mapped read-only, from mapFile, with
// pos the offset of the first byte the pipeline is to read.
type mapping struct {
	data []byte
	pos  int
	f    *os.File
}

// mapMin is the smallest file the Reader maps rather than reads: smaller
// ones take a few chunks, and the mapping is not worth its system calls.
// Tests lower it.
var mapMin int64 = 4 * (chunkSize + 4096)

// errShrunk is a mapped file cut short, or failing (a disk or network
// error), while it was read: its pages past the new end fault, which the
// goroutines touching them recover from.
var errShrunk = errors.New("the file shrank or failed while it was read")

// isFault reports whether a recovered panic is a memory fault, which
// debug.SetPanicOnFault turns a mapped file's missing page into.
func isFault(v any) bool {
	_, ok := v.(interface{ Addr() uintptr })
	return ok
}

func startPipeline(br *bufio.Reader, mapped *mapping, lp *lineParser, skipInvalid bool, workers int) *pipeline {
	p := &pipeline{
		work:    make(chan chunk, workers),
		results: make(chan *batch, workers),
		quit:    make(chan struct{}),
		pending: make(map[int]*batch),
		eof:     make(chan int, 1),
		total:   -1,
		csv:     lp.format == FormatCSV,
	}
	inFlight := 3*workers + 4 // work, parsing, results, pending, in hand
	p.bufs = make(chan []byte, inFlight)
	p.batches = make(chan *batch, inFlight)
	if mapped != nil {
		p.m, p.mpos, p.f = mapped.data, mapped.pos, mapped.f
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.produce(br, skipInvalid)
	}()
	for range workers {
		p.wg.Add(1)
		// Cloned here, not in the goroutine: the Reader goes on to update
		// lp's unit from the chunks.
		own := lp.clone()
		go func() {
			defer p.wg.Done()
			if p.m != nil {
				debug.SetPanicOnFault(true)
			}
			for c := range p.work {
				var b *batch
				select {
				case b = <-p.batches:
				default:
					b = new(batch)
				}
				parseMapped(b, c, own, skipInvalid)
				if c.mapped {
					p.dropChunk(c)
				}
				select {
				case p.results <- b:
				case <-p.quit:
					return
				}
			}
		}()
	}
	return p
}

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

// send hands a chunk to the parsing goroutines, false once the pipeline is
// closed.
func (p *pipeline) send(c chunk) bool {
	c.seq = p.seq
	p.seq++
	select {
	case p.work <- c:
		return true
	case <-p.quit:
		return false
	}
}

// produceMapped cuts chunks from the file's mapping, with no copy and no
// read calls, for as long as a whole buffer's worth of bytes is left (the
// chunks are the ones reading would cut); then it points br at the file
// where they end, for produce to read the rest as it reads any input. It
// returns false when it sent the last chunk.
func (p *pipeline) produceMapped(br *bufio.Reader) (more bool) {
	const window = chunkSize + 4096 // a chunk buffer's capacity
	debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(false)
	defer func() {
		if v := recover(); v != nil {
			if !isFault(v) {
				panic(v)
			}
			p.send(chunk{readErr: errShrunk})
			more = false
		}
	}()
	m, pos := p.m, p.mpos
	for len(m)-pos >= window {
		w := m[pos : pos+window]
		cut := p.cut(w)
		if cut < 0 {
			break // a long line: reading deals with it
		}
		if !p.send(chunk{data: w[: cut+1 : cut+1], mapped: true, end: pos + cut + 1}) {
			return false
		}
		p.mapped++
		pos += cut + 1
	}
	if _, err := p.f.Seek(int64(pos), io.SeekStart); err != nil {
		p.send(chunk{readErr: err})
		return false
	}
	br.Reset(p.f)
	return true
}

// produce cuts the input into chunks of whole lines.
func (p *pipeline) produce(br *bufio.Reader, skipInvalid bool) {
	defer close(p.work)
	var carry []byte
	send := p.send
	defer func() { p.eof <- p.seq }()
	if p.m != nil && !p.produceMapped(br) {
		return
	}
	for {
		var buf []byte
		select {
		case buf = <-p.bufs:
		default:
			buf = make([]byte, 0, chunkSize+4096)
		}
		buf = append(buf, carry...)
		carry = carry[:0]
		n, err := fill(br, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) > 0 {
				send(chunk{data: buf})
			}
			return
		}
		if err != nil {
			// Parse the whole lines before the failure, not a cut-off one.
			send(chunk{data: buf[:p.cut(buf)+1], readErr: err})
			return
		}
		cut := p.cut(buf)
		if cut < 0 {
			// One line fills the chunk: read on to its end, keeping at most
			// MaxLine of it; past that, only --skip-invalid reads on (to
			// skip it, up to MaxSkip), the rest stop at once, endless input
			// or not.
			long, rest, endless, err := readLongLine(br, buf, skipInvalid)
			if long != nil {
				if !send(chunk{data: long}) {
					return
				}
			} else if !send(chunk{data: buf[:min(len(buf), 40)], tooLong: true, endless: endless}) || !skipInvalid || endless {
				return
			}
			if err != nil {
				if err != io.EOF {
					send(chunk{readErr: err})
				}
				return
			}
			carry = append(carry, rest...)
			continue
		}
		carry = append(carry, buf[cut+1:]...)
		if !send(chunk{data: buf[:cut+1]}) {
			return
		}
	}
}

// cut returns where the last whole line in b ends, or with CSV the last
// whole record, whose quotes may hold line breaks; -1 for none. A CSV
// record longer than b is cut at a line end, for csvSplit to refuse.
func (p *pipeline) cut(b []byte) int {
	if p.csv {
		if c := csvCut(b); c >= 0 {
			return c
		}
	}
	return bytes.LastIndexByte(b, '\n')
}

// fill reads into buf until it is full or the input ends. Unlike
// io.ReadFull it passes on every error but io.EOF, io.ErrUnexpectedEOF
// included, so that a source cut short is never taken for an end.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// MaxSkip is the longest line --skip-invalid reads through to skip it: a
// line longer still is an error, so that endless input (/dev/zero) stops.
const MaxSkip = 64 * MaxLine

// readLongLine reads the rest of a line that began with start. It returns
// the whole line when it fits MaxLine, else nil: at once, or with drain,
// after reading past the line's end, or past MaxSkip (endless).
func readLongLine(br *bufio.Reader, start []byte, drain bool) (line, rest []byte, endless bool, err error) {
	line = append([]byte(nil), start...)
	read := len(start)
	for {
		var b []byte
		b, err = br.ReadSlice('\n')
		read += len(b)
		if line != nil {
			line = append(line, b...)
			if len(line) > MaxLine+2 {
				line = nil
				if !drain {
					return nil, nil, false, nil
				}
			}
		}
		if err != bufio.ErrBufferFull {
			break
		}
		if read > MaxSkip {
			return nil, nil, true, nil
		}
	}
	if err == io.EOF && line != nil && len(line) > 0 {
		return line, nil, false, io.EOF
	}
	return line, nil, false, err
}

// parseChunk parses every line of a chunk into b, reusing its slices.
func parseChunk(b *batch, c chunk, lp *lineParser, skipInvalid bool) {
	b.Batch.reset()
	b.seq, b.data, b.lines, b.skipped, b.skips, b.err, b.readErr = c.seq, c.data, 0, 0, nil, nil, nil
	hasEnd := lp.hasEnd()
	hasKey := lp.hasKey()
	if lp.access != nil {
		before := lp.access.Filtered
		defer func() { b.filtered = lp.access.Filtered - before }()
	}
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
			b.err = &InputError{Line: 1, Text: string(c.data), Msg: fmt.Sprintf("line longer than %d bytes, even for --skip-invalid", MaxSkip)}
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

// disableFastPath lets tests compare fastLines with the general path.
var disableFastPath bool

// fastLines parses, into b, the leading lines of data that are the common
// machine-written CSV: an integer epoch in the first column, perhaps a plain
// key in the second. It stops at the first line that is anything else and
// returns the rest, from that line on, for the general path, which also
// produces every error. Every line it takes, the general path reads alike
// (FuzzFastLines holds it to that).
func (lp *lineParser) fastLines(b *batch, data []byte, withKey bool) []byte {
	scale, ok := lp.tp.fastScale()
	if !ok {
		return data
	}
	maxV := uint64(1<<63-1) / uint64(scale)
	// The digit counts read in the fixed unit without the general path's
	// check, as bits.
	var agree uint32
	for d := range 20 {
		if lp.tp.digitsAgree(d) {
			agree |= 1 << d
		}
	}
	// The batch's slices are kept in locals while the loop runs.
	at, lineNo, lines := b.At, b.Line, b.lines
	var first firstWord
	for len(data) > 0 {
		var v uint64
		var n, next int
		var key []byte
		if len(data) >= 32 {
			// The common line, an epoch of 16 to 19 digits and a key of
			// up to seven bytes, read as four words with no loop: the
			// first eight digits (kept from the line before, as sorted
			// epochs change them once in 10^11 units), the next eight,
			// the rest with the comma after them, and the key.
			w1, w2 := binary.LittleEndian.Uint64(data[8:]), binary.LittleEndian.Uint64(data[16:])
			k := bits.TrailingZeros64(nonDigits(w2)) >> 3
			if first.digits(binary.LittleEndian.Uint64(data)) && digitWord(w1) == 0 && k <= 3 {
				n = 16 + k
				// The k digits to the top of w2, zeros below them.
				v = (first.v+wordValue(w1))*pow10[k&3] + wordValue(w2<<(64-8*k)|0x3030303030303030>>(8*k))
				switch byte(w2 >> (8 * k)) {
				case '\n':
					if !withKey {
						next = n + 1
					}
				case ',':
					// A key with a NUL byte is left to the general path.
					// The key's end is looked for in w2 first, which holds
					// it after 19 digits and up to three bytes: with the
					// comma's mark off, the lowest is the first comma,
					// newline or NUL after it, or a false one just after
					// it, so that the next line's start hangs on w2 alone.
					// A quote, too, leaves the line to the general path.
					m := colEnd(w2) | nulBytes(w2) | quoteBytes(w2)
					if p := bits.TrailingZeros64(m&(m-1)) >> 3; p < 8 && byte(w2>>(8*p)) == '\n' {
						next, key = 17+p, data[n+1:16+p]
						break
					}
					w := binary.LittleEndian.Uint64(data[n+1:])
					c := bits.TrailingZeros64(colEnd(w)|nulBytes(w)|quoteBytes(w)) >> 3
					if c < 8 && data[n+1+c] == '\n' {
						next, key = n+2+c, data[n+1:n+1+c]
					}
				}
			}
		}
		if next == 0 {
			// shapeLine does not look for NUL bytes: it waits for the
			// chunk to be known to hold none.
			if !lp.nulSeen {
				break
			}
			if v, n, next, key = shapeLine(data, withKey); next == 0 {
				break
			}
		}
		if v > maxV || agree>>n&1 == 0 {
			break
		}
		if withKey && (len(key) == 0 || key[0] == '"' || key[0] == ' ' || key[len(key)-1] == ' ' || key[len(key)-1] == '\r') {
			break
		}
		lines++
		at = append(at, int64(v)*scale)
		lineNo = append(lineNo, lines)
		if withKey {
			var id int32
			if k := len(key); k <= 8 && len(data)-(n+1) >= 8 {
				// The key's bytes as one word, read with the bytes after it
				// and masked off; indexShort's common case by hand, as it
				// is too large to inline.
				w := binary.LittleEndian.Uint64(data[n+1:]) & (1<<(8*k) - 1)
				h := shortHash(w, k)
				if s := lp.keys.home(h); s.word == w && int(s.n) == k && s.id != 0 {
					id = s.id - 1
				} else {
					id = lp.keys.probeShort(&b.Batch, key, w, h)
				}
			} else {
				id = lp.keys.index(&b.Batch, key)
			}
			b.keyIdx = append(b.keyIdx, id)
		}
		data = data[next:]
	}
	b.At, b.Line, b.lines = at, lineNo, lines
	return data
}

// shapeLine reads the start of a line for fastLines: the integer epoch
// that starts it and its digit count, where the next line starts, and,
// with withKey, the second column; next is 0 when the line is anything
// else than digits, then a newline (without withKey), or a comma and a
// second column that holds no quote and, with a third, a newline after.
func shapeLine(data []byte, withKey bool) (v uint64, n, next int, key []byte) {
	v, n = leadingDigits(data)
	if n == 0 || n > 19 || n >= len(data) {
		return 0, 0, 0, nil
	}
	switch data[n] {
	case '\n':
		if withKey {
			return 0, 0, 0, nil
		}
		return v, n, n + 1, nil
	case ',':
		rest := data[n+1:]
		// Keys are short: the second column's end is looked for in its
		// first eight bytes as one word, then by a plain loop, which
		// beats IndexByte's call; only a third column needs a search for
		// the line's end.
		c, inWord := 0, false
		if len(rest) >= 8 {
			w := binary.LittleEndian.Uint64(rest)
			if e := colEnd(w) | quoteBytes(w); e != 0 {
				c, inWord = bits.TrailingZeros64(e)>>3, true
			}
		}
		for !inWord && c < len(rest) && rest[c] != '\n' && rest[c] != ',' && rest[c] != '"' && c <= MaxLine {
			c++
		}
		nl := c
		if c < len(rest) && rest[c] == '"' {
			return 0, 0, 0, nil // quoting is the general path's
		}
		if c < len(rest) && rest[c] == ',' {
			i := bytes.IndexByte(rest[c:], '\n')
			if i < 0 || bytes.IndexByte(rest[c:c+i], '"') >= 0 {
				return 0, 0, 0, nil
			}
			nl += i
		}
		if nl == len(rest) || nl > MaxLine {
			return 0, 0, 0, nil
		}
		return v, n, n + 1 + nl + 1, rest[:c]
	}
	return 0, 0, 0, nil
}

// firstWord keeps the first eight digits of the last line's epoch for
// fastLines. The zero value is ready to use.
type firstWord struct {
	w uint64 // the word, less "00000000", so that the zero value stands for it
	v uint64 // its digits' value, times 10^8
}

// digits reports whether w, a line's first eight bytes, is eight digits,
// and keeps their value in f.v.
func (f *firstWord) digits(w uint64) bool {
	if w-0x3030303030303030 != f.w {
		if digitWord(w) != 0 {
			return false
		}
		f.w, f.v = w-0x3030303030303030, wordValue(w)*100000000
	}
	return true
}

// pow10 holds the powers of ten fastLines scales by.
var pow10 = [4]uint64{1, 10, 100, 1000}

// digitWord is zero when the eight bytes of w are all decimal digits.
func digitWord(w uint64) uint64 {
	return (w&0xF0F0F0F0F0F0F0F0 | (w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0>>4) ^ 0x3333333333333333
}

// nonDigits marks the bytes of w that are not decimal digits: the lowest
// set bit of the result is the high bit of the first such byte (bits above
// it may be set falsely, by carries), and it is zero when all are digits.
func nonDigits(w uint64) uint64 {
	z := (w&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 ^ 0x3030303030303030)
	return (z | (z + 0x7070707070707070)) & 0x8080808080808080
}

// wordValue is the number the eight decimal digits of w spell, the first
// in the lowest byte.
func wordValue(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8
	return ((w&0x000000FF000000FF)*(100+1000000<<32) + ((w>>16)&0x000000FF000000FF)*(1+10000<<32)) >> 32
}

// fastJSONLines is fastLines for JSON lines: it takes the leading lines
// of data that are flat objects (flatFields) with an integer epoch in the
// time field, and no end or duration, and leaves the rest, from the first
// line that is anything else, to the general path, which also produces
// every error. FuzzFastJSON holds the two to the same records.
func (lp *lineParser) fastJSONLines(b *batch, data []byte, withKey bool) []byte {
	scale, ok := lp.tp.fastScale()
	if !ok {
		return data
	}
	maxV := uint64(1<<63-1) / uint64(scale)
	var m shapeMatch
	for len(data) > 0 {
		if !lp.shape.match(data, &m) {
			nl := bytes.IndexByte(data, '\n')
			if nl < 0 || nl > MaxLine {
				return data
			}
			texts, ok := lp.shape.learn(lp, data[:nl])
			if !ok {
				return data
			}
			m = shapeMatch{texts: texts, size: nl + 1}
		}
		v, n := m.tv, m.tn
		if t := m.texts[slotTime]; n == 0 {
			if len(t) == 0 || len(t) > 19 {
				return data
			}
			if v, n = leadingDigits(t); n != len(t) {
				return data
			}
		}
		if m.size > MaxLine+1 || v > maxV || !lp.tp.digitsAgree(n) {
			return data
		}
		b.lines++
		b.At = append(b.At, int64(v)*scale)
		b.Line = append(b.Line, b.lines)
		if withKey {
			b.keyIdx = append(b.keyIdx, lp.keys.index(&b.Batch, m.texts[slotKey]))
		}
		data = data[m.size:]
	}
	return data
}

// colEnd marks the bytes of w that are a newline or a comma: the lowest
// set bit of the result is the high bit of the first such byte (bits above
// it may be set falsely, by borrows).
func colEnd(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	nl, comma := w^('\n'*ones), w^(','*ones)
	return ((nl-ones)&^nl | (comma-ones)&^comma) & highs
}

// quoteBytes marks the quotes in w as colEnd marks newlines and commas.
func quoteBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ ('"' * ones)
	return (q - ones) &^ q & highs
}

// nulBytes marks the NUL bytes of w as colEnd marks newlines and commas.
func nulBytes(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w - ones) &^ w & highs
}

// leadingDigits reads the decimal digits at the start of b, at most 20 of
// them (more than any int64 needs, so that 20 means too many), eight at a
// time where it can: the eight bytes are checked and combined as one
// 64-bit word.
func leadingDigits(b []byte) (v uint64, n int) {
	for n <= 12 && len(b)-n >= 8 {
		w := binary.LittleEndian.Uint64(b[n:])
		if (w&0xF0F0F0F0F0F0F0F0)|(((w+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4) != 0x3333333333333333 {
			break
		}
		w -= 0x3030303030303030
		w = w*10 + w>>8
		w = ((w&0x000000FF000000FF)*(100+1000000<<32) + ((w>>16)&0x000000FF000000FF)*(1+10000<<32)) >> 32
		v = v*100000000 + w
		n += 8
	}
	for n < len(b) && n < 20 {
		d := b[n] - '0'
		if d > 9 {
			break
		}
		v = v*10 + uint64(d)
		n++
	}
	return v, n
}

// next returns the next batch in input order, or false after the last.
func (p *pipeline) next() (*batch, bool) {
	for {
		if b, ok := p.pending[p.want]; ok {
			delete(p.pending, p.want)
			p.want++
			return b, true
		}
		if p.total < 0 {
			select {
			case p.total = <-p.eof:
			default:
			}
		}
		if p.total >= 0 && p.want >= p.total {
			return nil, false
		}
		select {
		case b := <-p.results:
			p.pending[b.seq] = b
		case n := <-p.eof:
			p.total = n
		}
	}
}

// dropChunk gives back the pages of a mapped chunk just parsed, but for
// those it shares with the chunks on either side, which recycle gives
// back once the chunks before them are consumed: the batch holds copies
// of all it needs from the chunk, and a page dropped early is read again
// from the page cache if touched.
func (p *pipeline) dropChunk(c chunk) {
	page := os.Getpagesize()
	if lo, hi := (c.end-len(c.data)+page-1)&^(page-1), c.end&^(page-1); lo < hi {
		dropPages(p.m[lo:hi])
	}
}

// recycle returns a consumed batch and its chunk buffer for reuse; the
// pages of mapped chunks left by dropChunk are given back a MiB at a time.
func (p *pipeline) recycle(b *batch) {
	if b.mapped {
		if end := b.end &^ (os.Getpagesize() - 1); end-p.released >= 1<<20 {
			dropPages(p.m[p.released:end])
			p.released = end
		}
	} else if cap(b.data) >= chunkSize {
		select {
		case p.bufs <- b.data[:0]:
		default:
		}
	}
	b.data, b.skips, b.err = nil, nil, nil
	select {
	case p.batches <- b:
	default:
	}
}

// close stops the goroutines; batches not yet handed out are dropped. A
// mapped file is unmapped once the goroutines that read it have stopped.
func (p *pipeline) close() {
	p.once.Do(func() {
		close(p.quit)
		if p.m != nil {
			p.wg.Wait()
			unmapFile(p.m)
			p.m = nil
		}
	})
}

// keyDict gives each distinct key of a batch its index. It is an
// open-addressing table over the batch's own key store whose slots hold
// keys of up to eight bytes whole, so that the common short key costs one
// hash and one word comparison: a Go map cost more than parsing the rest of
// the line. A longer key that repeats the last one found skips the table.
type keyDict struct {
	slots []dictSlot
	used  []int32 // the slots filled for this batch, to clear them
	// The last key longer than a word that was found, and its index.
	last    []byte
	lastID  int32
	hasLast bool
}

type dictSlot struct {
	word uint64 // the key's first eight bytes, little-endian
	hash uint64
	n    int32 // the key's length
	id   int32 // the key's index + 1; 0 is an empty slot
}

func (d *keyDict) reset() {
	for _, s := range d.used {
		d.slots[s] = dictSlot{}
	}
	d.used = d.used[:0]
	d.hasLast = false
	if d.slots == nil {
		d.slots = make([]dictSlot, 256)
	}
}

// keyWord packs a key's first eight bytes into a word and hashes the key.
func keyWord(key []byte) (w, h uint64) {
	if len(key) >= 8 {
		w = binary.LittleEndian.Uint64(key)
	} else {
		for i, c := range key {
			w |= uint64(c) << (8 * i)
		}
	}
	h = (w ^ uint64(len(key))<<56) * 0x9E3779B97F4A7C15
	for rest := key[min(len(key), 8):]; len(rest) > 0; rest = rest[min(len(rest), 8):] {
		var x uint64
		if len(rest) >= 8 {
			x = binary.LittleEndian.Uint64(rest)
		} else {
			for i, c := range rest {
				x |= uint64(c) << (8 * i)
			}
		}
		h = (h ^ h>>29 ^ x) * 0xBF58476D1CE4E5B9
	}
	return w, h ^ h>>32
}

// index returns key's index among b's distinct keys, adding it on first
// sight.
func (d *keyDict) index(b *Batch, key []byte) int32 {
	if len(key) <= 8 {
		w, _ := keyWord(key)
		return d.indexShort(b, key, w)
	}
	if d.hasLast && string(key) == string(d.last) {
		return d.lastID
	}
	w, h := keyWord(key)
	mask := uint64(len(d.slots) - 1)
	i := h & mask
	for ; d.slots[i].id != 0; i = (i + 1) & mask {
		s := &d.slots[i]
		if s.word == w && int(s.n) == len(key) && string(b.DistinctKey(int(s.id-1))) == string(key) {
			// The stored copy, not key: a JSON key's bytes may be the
			// parser's, overwritten by the next line.
			d.setLast(b.DistinctKey(int(s.id-1)), s.id-1)
			return s.id - 1
		}
	}
	id := d.add(b, key, w, h, i)
	d.setLast(b.DistinctKey(int(id)), id)
	return id
}

// indexShort is index for a key of at most eight bytes, w being the key
// as keyWord packs it. Such a key is compared as its word and length
// alone, without touching its bytes; the common case, found in its home
// slot, is small enough to inline.
func (d *keyDict) indexShort(b *Batch, key []byte, w uint64) int32 {
	h := shortHash(w, len(key))
	if s := d.home(h); s.word == w && int(s.n) == len(key) && s.id != 0 {
		return s.id - 1
	}
	return d.probeShort(b, key, w, h)
}

// shortHash is keyWord's hash of a key of at most eight bytes.
func shortHash(w uint64, n int) uint64 {
	h := (w ^ uint64(n)<<56) * 0x9E3779B97F4A7C15
	return h ^ h>>32
}

// home returns the slot where a key of hash h is looked for first.
func (d *keyDict) home(h uint64) *dictSlot { return &d.slots[h&uint64(len(d.slots)-1)] }

// probeShort is indexShort past the key's home slot.
func (d *keyDict) probeShort(b *Batch, key []byte, w, h uint64) int32 {
	n := int32(len(key))
	mask := uint64(len(d.slots) - 1)
	i := h & mask
	for ; d.slots[i].id != 0; i = (i + 1) & mask {
		if s := &d.slots[i]; s.word == w && s.n == n {
			return s.id - 1
		}
	}
	return d.add(b, key, w, h, i)
}

// setLast notes a key longer than a word as the last found.
func (d *keyDict) setLast(stored []byte, id int32) {
	d.last, d.lastID, d.hasLast = stored, id, true
}

// add stores key in b as a new distinct key, in the empty slot i.
func (d *keyDict) add(b *Batch, key []byte, w, h uint64, i uint64) int32 {
	id := int32(len(b.keyOff))
	b.keyOff = append(b.keyOff, int32(len(b.keys)))
	b.keyLen = append(b.keyLen, int32(len(key)))
	b.keys = append(b.keys, key...)
	d.slots[i] = dictSlot{word: w, hash: h, n: int32(len(key)), id: id + 1}
	d.used = append(d.used, int32(i))
	if 2*len(d.used) > len(d.slots) {
		d.rehash()
	}
	return id
}

// rehash doubles the table, keeping it at most half full.
func (d *keyDict) rehash() {
	old := d.slots
	d.slots = make([]dictSlot, 2*len(old))
	mask := uint64(len(d.slots) - 1)
	d.used = d.used[:0]
	for _, s := range old {
		if s.id == 0 {
			continue
		}
		i := s.hash & mask
		for d.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		d.slots[i] = s
		d.used = append(d.used, int32(i))
	}
}

package sendlog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
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
	// Cost[u] holds each send's cost in unit Options.Costs[u]; nil for the
	// units past the last.
	Cost [MaxCosts][]int64
	// Status holds each send's HTTP status when the options name one.
	Status []int16
	// Settled and Actual hold each send's settlement when the options name
	// one (Record.Settled, Record.Actual).
	Settled []int64
	Actual  [MaxCosts][]int64
	// Texts holds each send's Record.Texts when the options name any.
	Texts [][]string

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
	b.At, b.End, b.Line, b.Status, b.Settled = b.At[:0], b.End[:0], b.Line[:0], b.Status[:0], b.Settled[:0]
	clear(b.Texts)
	b.Texts = b.Texts[:0]
	for u := range b.Actual {
		b.Actual[u] = b.Actual[u][:0]
	}
	b.keyIdx, b.keyOff, b.keyLen, b.keys = b.keyIdx[:0], b.keyOff[:0], b.keyLen[:0], b.keys[:0]
	for u := range b.Cost {
		if b.Cost[u] != nil {
			b.Cost[u] = b.Cost[u][:0]
		}
	}
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

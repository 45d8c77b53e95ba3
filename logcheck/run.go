package logcheck

import (
	"cmp"
	"io"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// Input is one send log to read.
type Input struct {
	Name string
	R    io.Reader
}

// Config says what to check and how to read the inputs.
type Config struct {
	Rules    []rule.Rule
	Boundary rule.Boundary
	// List keeps the first List violations of each rule, per key.
	List int
	// MaxInFlight checks a cap on calls in flight (it needs end times or
	// durations in the input); 0 checks none.
	MaxInFlight int
	Read        sendlog.Options
	// MaxDisorder is how far out of time order a send may arrive in its
	// input and still be put in its place.
	MaxDisorder time.Duration
	// Sort reads every input into memory and sorts it, for logs with no
	// order at all.
	Sort bool
	// KeepTimes keeps every group's send times in Group.Times, for charts
	// (8 bytes a send).
	KeepTimes bool
}

// Run reads the inputs as one stream merged by time (the provider sees the
// sum) and checks it. Bad input is returned as *sendlog.InputError.
func Run(inputs []Input, cfg Config) (*Result, error) {
	res := &Result{Rules: cfg.Rules, Boundary: cfg.Boundary, MaxInFlight: cfg.MaxInFlight, PerKey: cfg.Read.HasKey()}
	groups := &groupTable{cfg: cfg, ids: map[string]int32{}, res: res}
	if !res.PerKey {
		groups.lookup(nil)
	}
	streams := make([]*stream, len(inputs))
	for i, in := range inputs {
		streams[i] = &stream{
			rd: sendlog.NewReader(in.Name, in.R, cfg.Read),
			ro: reorder{name: in.Name, file: i, horizon: int64(cfg.MaxDisorder)},
		}
		if res.PerKey {
			streams[i].keyOf = groups.keyOf
		}
		defer streams[i].rd.Close()
	}
	var err error
	switch {
	case cfg.Sort:
		err = runSorted(streams, groups)
	case len(streams) == 1:
		err = runSingle(streams[0], groups)
	default:
		err = runMerged(streams, groups)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range streams {
		res.Files = append(res.Files, s.info())
		res.Disorder.Lines += s.ro.disorder.Lines
		res.Disorder.Max = max(res.Disorder.Max, s.ro.disorder.Max)
	}
	groups.finish()
	return res, nil
}

// runSingle checks one input, handing each released run to the checkers
// whole.
func runSingle(s *stream, groups *groupTable) error {
	for {
		n := s.ro.ready(s.eof)
		if n > 0 {
			groups.observeRun(s.ro.buf.slice(n))
			s.ro.buf.drop(n)
			continue
		}
		if s.eof {
			return nil
		}
		if err := s.fill(); err != nil {
			return err
		}
	}
}

// runMerged merges the inputs' time-ordered streams with a heap.
func runMerged(streams []*stream, groups *groupTable) error {
	h := make(mergeHeap, 0, len(streams))
	for i, s := range streams {
		it, ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, head{it, s, i})
		}
	}
	h.init()
	for len(h) > 0 {
		top := &h[0]
		groups.observe(top.it)
		it, ok, err := top.s.next()
		if err != nil {
			return err
		}
		if ok {
			top.it = it
			h.down(0)
		} else {
			h.pop()
		}
	}
	return nil
}

// runSorted reads everything, then sorts by time; ties keep input order,
// file by file.
func runSorted(streams []*stream, groups *groupTable) error {
	var all []item
	for _, s := range streams {
		s.ro.horizon = 1<<63 - 1
		for {
			if err := s.fill(); err != nil {
				return err
			}
			for i := range s.ro.buf.len() {
				all = append(all, s.ro.buf.item(i))
			}
			s.ro.buf.drop(s.ro.buf.len())
			if s.eof {
				break
			}
		}
	}
	slices.SortStableFunc(all, func(a, b item) int { return cmp.Compare(a.at, b.at) })
	for _, it := range all {
		groups.observe(it)
	}
	return nil
}

// stream is one input, read in batches and repaired within the reorder
// horizon.
type stream struct {
	rd    *sendlog.Reader
	ro    reorder
	keyOf func(b *sendlog.Batch, i int) int32
	eof   bool
	next_ int // next released send handed out by next
	ready int // released sends not yet handed out
}

// fill reads the next batch into the reorder buffer.
func (s *stream) fill() error {
	b, err := s.rd.NextBatch()
	if err == io.EOF {
		s.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	return s.ro.push(b, s.keyOf)
}

// next returns the stream's next send in time order, one at a time, for
// the merge.
func (s *stream) next() (item, bool, error) {
	for s.ready == 0 {
		if s.next_ > 0 {
			s.ro.buf.drop(s.next_)
			s.next_ = 0
		}
		if s.ready = s.ro.ready(s.eof); s.ready > 0 {
			break
		}
		if s.eof {
			return item{}, false, nil
		}
		if err := s.fill(); err != nil {
			return item{}, false, err
		}
	}
	it := s.ro.buf.item(s.next_)
	s.next_++
	s.ready--
	return it, true, nil
}

func (s *stream) info() FileInfo {
	n, skips := s.rd.Skipped()
	fi := FileInfo{
		Name: s.rd.Name(), Format: s.rd.Format().String(), Column: s.rd.Column(),
		Detected: s.rd.Detected(), Lines: s.rd.Lines(), Sends: s.rd.Sends(), Skipped: n,
		Filtered: s.rd.Filtered(),
	}
	for _, e := range skips {
		fi.Skips = append(fi.Skips, e)
	}
	return fi
}

type head struct {
	it   item
	s    *stream
	file int
}

// mergeHeap orders stream heads by time, then by input order.
type mergeHeap []head

func (h mergeHeap) less(i, j int) bool {
	if h[i].it.at != h[j].it.at {
		return h[i].it.at < h[j].it.at
	}
	return h[i].file < h[j].file
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		j := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (h *mergeHeap) pop() {
	old := *h
	n := len(old) - 1
	old[0] = old[n]
	*h = old[:n]
	h.down(0)
}

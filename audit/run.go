package audit

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
}

// Run reads the inputs as one stream merged by time (the provider sees the
// sum) and checks it. Bad input is returned as *sendlog.InputError.
func Run(inputs []Input, cfg Config) (*Result, error) {
	res := &Result{Rules: cfg.Rules, Boundary: cfg.Boundary, MaxInFlight: cfg.MaxInFlight, PerKey: cfg.Read.HasKey()}
	groups := &groupTable{cfg: cfg, ids: map[string]int32{}}
	if !res.PerKey {
		groups.lookup(nil)
	}
	streams := make([]*stream, len(inputs))
	for i, in := range inputs {
		streams[i] = &stream{
			file: i,
			rd:   sendlog.NewReader(in.Name, in.R, cfg.Read),
			ro:   reorder{name: in.Name, horizon: int64(cfg.MaxDisorder)},
			keys: groups,
		}
		defer streams[i].rd.Close()
	}
	var err error
	if cfg.Sort {
		err = runSorted(streams, groups, res)
	} else {
		err = runMerged(streams, groups, res)
	}
	if err != nil {
		return nil, err
	}
	for _, s := range streams {
		res.Files = append(res.Files, s.info())
		res.Disorder.Lines += s.ro.disorder.Lines
		res.Disorder.Max = max(res.Disorder.Max, s.ro.disorder.Max)
	}
	groups.finish(res)
	return res, nil
}

// observe hands one send to its group's checkers.
func observe(it item, groups *groupTable, res *Result) {
	if res.Sends == 0 {
		res.First = it.at
	}
	res.Sends++
	res.Last = it.at
	groups.observe(it)
}

// runMerged merges the inputs' time-ordered streams with a heap.
func runMerged(streams []*stream, groups *groupTable, res *Result) error {
	h := make(mergeHeap, 0, len(streams))
	for _, s := range streams {
		it, ok, err := s.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, head{it, s})
		}
	}
	h.init()
	for len(h) > 0 {
		top := &h[0]
		observe(top.it, groups, res)
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
func runSorted(streams []*stream, groups *groupTable, res *Result) error {
	var all []item
	for _, s := range streams {
		s.ro.horizon = 1<<63 - 1
		for {
			rec, err := s.rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			all = append(all, s.item(rec))
		}
	}
	slices.SortStableFunc(all, func(a, b item) int { return cmp.Compare(a.at, b.at) })
	for _, it := range all {
		observe(it, groups, res)
	}
	return nil
}

// stream is one input, read and repaired within the reorder horizon.
type stream struct {
	file int
	rd   *sendlog.Reader
	ro   reorder
	keys *groupTable
	eof  bool
}

func (s *stream) item(rec sendlog.Record) item {
	it := item{at: rec.At, end: rec.End, ref: MakeRef(s.file, rec.Line)}
	if s.keys.perKey() {
		it.key = s.keys.lookup(rec.Key)
	}
	return it
}

func (s *stream) next() (item, bool, error) {
	for {
		if it, ok := s.ro.ready(s.eof); ok || s.eof {
			return it, ok, nil
		}
		rec, err := s.rd.Next()
		if err == io.EOF {
			s.eof = true
			continue
		}
		if err != nil {
			return item{}, false, err
		}
		if err := s.ro.push(s.item(rec)); err != nil {
			return item{}, false, err
		}
	}
}

func (s *stream) info() FileInfo {
	n, skips := s.rd.Skipped()
	fi := FileInfo{
		Name: s.rd.Name(), Format: s.rd.Format().String(), Column: s.rd.Column(),
		Detected: s.rd.Detected(), Lines: s.rd.Lines(), Sends: s.rd.Sends(), Skipped: n,
	}
	for _, e := range skips {
		fi.Skips = append(fi.Skips, e)
	}
	return fi
}

type head struct {
	it item
	s  *stream
}

// mergeHeap orders stream heads by time, then by input order.
type mergeHeap []head

func (h mergeHeap) less(i, j int) bool {
	if h[i].it.at != h[j].it.at {
		return h[i].it.at < h[j].it.at
	}
	return h[i].s.file < h[j].s.file
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

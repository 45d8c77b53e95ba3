package logcheck

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
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
	// Sort holds every input whole and sorts it, for logs with no order at
	// all.
	Sort bool
	// MaxBuffered bounds the sends held at once over all inputs: those
	// within MaxDisorder of the newest, which a late line may still
	// precede, or with Sort every send. Past it (checked before each read,
	// so one batch of lines may pass it) Run fails with an error naming the
	// bound rather than grow without end. Sends at one instant from
	// consecutive lines are held as one. 0 means DefaultMaxBuffered.
	MaxBuffered int
	// KeepTimes keeps every group's send times in Group.Times, for charts
	// (8 bytes a send).
	KeepTimes bool
	// Shard, when set, judges only the sends in a time range (see Shard).
	Shard *Shard
}

// Run reads the inputs as one stream merged by time (the provider sees the
// sum) and checks it. Bad input is returned as *sendlog.InputError.
func Run(inputs []Input, cfg Config) (*Result, error) {
	if cfg.MaxBuffered < 0 {
		return nil, fmt.Errorf("--max-buffered %d: want 1 or more", cfg.MaxBuffered)
	}
	if cfg.MaxDisorder < 0 {
		return nil, errors.New("--max-disorder: want 0 or more")
	}
	bud := &budget{max: cfg.MaxBuffered, sort: cfg.Sort}
	if bud.max == 0 {
		bud.max = DefaultMaxBuffered
	}
	horizon := int64(cfg.MaxDisorder)
	if cfg.Sort {
		horizon = math.MaxInt64
	}
	res := &Result{Rules: cfg.Rules, Boundary: cfg.Boundary, MaxInFlight: cfg.MaxInFlight, PerKey: cfg.Read.HasKey()}
	groups := &groupTable{cfg: cfg, ids: map[string]int32{}, res: res, shard: newShardState(cfg)}
	if !res.PerKey {
		groups.lookup(nil)
	}
	streams := make([]*stream, len(inputs))
	for i, in := range inputs {
		streams[i] = &stream{
			rd: sendlog.NewReader(in.Name, in.R, cfg.Read),
			ro: reorder{name: in.Name, file: i, horizon: horizon, budget: bud},
		}
		if res.PerKey {
			streams[i].groups = groups
		}
		defer streams[i].rd.Close()
	}
	var err error
	if len(streams) == 1 {
		err = runSingle(streams[0], groups)
	} else {
		err = runMerged(streams, groups)
	}
	if err != nil {
		return nil, err
	}
	res.PeakBuffered = bud.peak
	for _, s := range streams {
		res.Files = append(res.Files, s.info())
		res.Disorder.Lines += s.ro.disorder.Lines
		res.Disorder.Max = max(res.Disorder.Max, s.ro.disorder.Max)
	}
	groups.finish()
	groups.finishShard()
	return res, nil
}

// runSingle checks one input, handing each released run to the checkers
// whole.
func runSingle(s *stream, groups *groupTable) error {
	for {
		if run := s.ro.release(s.eof); run.len() > 0 {
			run, stop, err := groups.shard.clip(run)
			if err != nil {
				return err
			}
			if run.len() > 0 {
				groups.observeRun(run)
			}
			if stop {
				return nil
			}
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
	// The merged sends go to the checkers in runs, as a single input's do.
	withKey, withEnd := groups.res.PerKey, groups.cfg.MaxInFlight > 0
	buf := held{at: []int64{}, ref: []int64{}}
	if withEnd {
		buf.end = []int64{}
	}
	if withKey {
		buf.key = []int32{}
	}
	for len(h) > 0 {
		if buf.len() == outMax {
			groups.observeRun(buf)
			buf.reset()
		}
		top := &h[0]
		stop, err := groups.shard.past(top.it.at)
		if err != nil {
			return err
		}
		if stop {
			break
		}
		buf.appendItem(top.it, withEnd, withKey)
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
	groups.observeRun(buf)
	return nil
}

// stream is one input, read in batches and repaired within the reorder
// horizon.
type stream struct {
	rd     *sendlog.Reader
	ro     reorder
	groups *groupTable // with a key column, to look up the keys' groups
	keys   []int32     // fill: the group ids of a batch's sends
	eof    bool
	out    held // released sends, handed out one at a time by next
	pos    int  // the next of them
}

// fill reads the next batch into the reorder buffer.
func (s *stream) fill() error {
	if err := s.ro.bound(); err != nil {
		return err
	}
	b, err := s.rd.NextBatch()
	if err == io.EOF {
		s.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	var keys []int32
	if s.groups != nil {
		if s.keys == nil {
			s.keys = []int32{}
		}
		s.keys = s.groups.keyIDs(b, s.keys[:0])
		keys = s.keys
	}
	return s.ro.push(b, keys)
}

// next returns the stream's next send in time order, one at a time, for
// the merge.
func (s *stream) next() (item, bool, error) {
	if s.pos < len(s.out.at) && s.out.end == nil && s.out.key == nil {
		it := item{at: s.out.at[s.pos], ref: Ref(s.out.ref[s.pos])}
		s.pos++
		return it, true, nil
	}
	for s.pos == s.out.len() {
		if s.out, s.pos = s.ro.release(s.eof), 0; s.out.len() > 0 {
			break
		}
		if s.eof {
			return item{}, false, nil
		}
		if err := s.fill(); err != nil {
			return item{}, false, err
		}
	}
	it := s.out.item(s.pos)
	s.pos++
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

// Open opens the send logs at paths for Run, "-" being stdin. It returns
// them with their total size in bytes (stdin counts 0) and a func that
// closes them.
func Open(paths []string, stdin io.Reader) ([]Input, int64, func(), error) {
	var inputs []Input
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var total int64
	for _, p := range paths {
		if p == "-" {
			inputs = append(inputs, Input{Name: "<stdin>", R: stdin})
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, 0, nil, err
		}
		files = append(files, f)
		if st, err := f.Stat(); err == nil {
			total += st.Size()
		}
		inputs = append(inputs, Input{Name: p, R: f})
	}
	return inputs, total, closeAll, nil
}

// RunEach runs the inputs merged into one stream, or with perFile each on
// its own, and returns a result per stream checked.
func RunEach(inputs []Input, perFile bool, cfg Config) ([]*Result, error) {
	groups := [][]Input{inputs}
	if perFile {
		groups = nil
		for _, in := range inputs {
			groups = append(groups, []Input{in})
		}
	}
	var results []*Result
	for _, g := range groups {
		res, err := Run(g, cfg)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

package logcheck

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/report"
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
	// KeepTimes keeps every group's send times in report.Group.Times, for charts
	// (8 bytes a send).
	KeepTimes bool
	// report.Shard, when set, judges only the sends in a time range (see report.Shard).
	Shard *report.Shard
	// ListKeys, when positive, keeps the verdicts of the ListKeys worst
	// keys in report.Result.Groups and sums up the others in
	// report.Result.Unlisted, so that the result's memory follows ListKeys
	// rather than the keys in the log; 0 keeps every key. A shard keeps
	// every key, which merging needs.
	ListKeys int
	// Refusals is the reading of refused calls (429) in a log that gives
	// each call's status (Read.StatusCol or StatusField): see status.go.
	Refusals rule.Refusals
	// MaxMemory is the memory ceiling in bytes (0: the runtime's memory
	// limit, GOMEMLIMIT, when one is set): a check per key whose live heap
	// passes three quarters of it ends with a *MemoryError rather than
	// grow until the process dies.
	MaxMemory int64
}

// Run reads the inputs as one stream merged by time (the provider sees the
// sum) and checks it. Bad input is returned as *sendlog.InputError.
func Run(inputs []Input, cfg Config) (*report.Result, error) {
	if cfg.MaxBuffered < 0 {
		return nil, fmt.Errorf("logcheck.Config.MaxBuffered %d: want 1 or more", cfg.MaxBuffered)
	}
	if cfg.MaxDisorder < 0 {
		return nil, errors.New("logcheck.Config.MaxDisorder: want 0 or more")
	}
	bud := &budget{max: cfg.MaxBuffered, sort: cfg.Sort}
	if bud.max == 0 {
		bud.max = DefaultMaxBuffered
	}
	horizon := int64(cfg.MaxDisorder)
	if cfg.Sort {
		horizon = math.MaxInt64
	}
	res := &report.Result{Rules: cfg.Rules, Boundary: cfg.Boundary, MaxInFlight: cfg.MaxInFlight, PerKey: cfg.Read.HasKey()}
	shard, err := newShardState(cfg)
	if err != nil {
		return nil, err
	}
	groups := &groupTable{cfg: cfg, ids: map[string]int32{}, res: res, shard: shard, costs: newCostTable(cfg.Read, len(inputs))}
	if !cfg.Read.HasStatus() && !cfg.Read.HasSettled() {
		// A status or a settlement judges sends one by one: none is held.
		groups.hold = newHoldLimits(cfg.Rules, groups.checkerConfig().Units)
	}
	groups.ceiling = memoryCeiling(cfg.MaxMemory)
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
		streams[i].costs = groups.costs
		defer streams[i].rd.Close()
	}
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
	if err := groups.err; err != nil {
		return nil, placeCostError(err, inputs)
	}
	groups.finish()
	groups.finishShard()
	res = groups.res
	return res, nil
}

// placeCostError names the input and line of a send the checker could not
// take for its costs.
func placeCostError(err error, inputs []Input) error {
	var ce *checker.CostError
	if !errors.As(err, &ce) {
		return err
	}
	ref := report.Ref(ce.Send.Ref)
	return &sendlog.InputError{File: inputs[ref.File()].Name, Line: ref.Line(), Msg: ce.Msg}
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
				if err := groups.observeRun(run); err != nil {
					return err
				}
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

// runMerged merges the inputs' time-ordered streams a round at a time.
// Each round takes, from every input, the released sends that no send yet
// unread can precede, and merges those runs in one pass (mergeRuns).
//
// In (time, ref) order, which is time then input then line (report.MakeRef), an
// input's unread sends come after its last released one. So every held
// send up to the least of the inputs' last released sends is final: all
// of them go to the checkers now, and the input that sets the bound gives
// all it offered, so each round makes progress. An input offers at most
// roundMax sends a round.
func runMerged(streams []*stream, groups *groupTable) error {
	live := slices.Clone(streams)
	var m merger
	segs := make([]held, 0, len(streams))
	for {
		// Every live input needs a released send before the bound is known.
		w := 0
		for _, s := range live {
			ok, err := s.refill()
			if err != nil {
				return err
			}
			if ok {
				live[w] = s
				w++
			}
		}
		live = live[:w]
		if len(live) == 0 {
			return nil
		}
		boundAt, boundRef := int64(math.MaxInt64), int64(math.MaxInt64)
		for _, s := range live {
			n := s.roundEnd() - 1
			if at, ref := s.out.at[n], s.out.ref[n]; before(at, ref, boundAt, boundRef) {
				boundAt, boundRef = at, ref
			}
		}
		segs = segs[:0]
		for _, s := range live {
			n := s.upTo(boundAt, boundRef)
			segs = append(segs, s.out.sub(s.pos, s.pos+n))
			s.pos += n
		}
		run, stop, err := groups.shard.clip(m.merge(segs))
		if err != nil {
			return err
		}
		if err := groups.observeRun(run); err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
}

// stream is one input, read in batches and repaired within the reorder
// horizon.
type stream struct {
	rd     *sendlog.Reader
	ro     reorder
	groups *groupTable // with a key column, to look up the keys' groups
	costs  *costTable  // with costs, where each send's costs wait
	keys   []int32     // fill: the group ids of a batch's sends
	eof    bool
	out    held // released sends, merged a round at a time
	pos    int  // the first not yet merged
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
	if s.costs != nil {
		s.costs.add(s.ro.file, b)
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

// refill makes sure the stream has a released send not yet merged,
// reading on as needed; false once the input is done.
func (s *stream) refill() (bool, error) {
	for s.pos == s.out.len() {
		if s.out, s.pos = s.ro.release(s.eof), 0; s.out.len() > 0 {
			break
		}
		if s.eof {
			return false, nil
		}
		if err := s.fill(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// roundMax bounds the sends an input offers to one round of the merge, so
// that the merge's buffers stay small.
const roundMax = 4096

// roundEnd is where the sends the stream offers to a round end.
func (s *stream) roundEnd() int { return min(s.out.len(), s.pos+roundMax) }

// upTo counts the stream's released sends, from pos, that are not after
// (at, ref) in (time, ref) order.
func (s *stream) upTo(at, ref int64) int {
	end := s.roundEnd()
	ats, refs := s.out.at[s.pos:end], s.out.ref[s.pos:end]
	lo, hi := 0, len(ats)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if before(at, ref, ats[m], refs[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func (s *stream) info() report.FileInfo {
	n, skips := s.rd.Skipped()
	fi := report.FileInfo{
		Name: s.rd.Name(), Format: s.rd.Format().String(), Column: s.rd.Column(),
		Detected: s.rd.Detected(), Chosen: s.rd.Chosen(), Lines: s.rd.Lines(), Sends: s.rd.Sends(), Skipped: n,
		Filtered: s.rd.Filtered(),
	}
	for _, e := range skips {
		fi.Skips = append(fi.Skips, e)
	}
	return fi
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
		inputs = append(inputs, Input{Name: keytext.Show(p), R: f}) // the name is what outputs show
	}
	return inputs, total, closeAll, nil
}

// RunEach runs the inputs merged into one stream, or with perFile each on
// its own, and returns a result per stream checked.
func RunEach(inputs []Input, perFile bool, cfg Config) ([]*report.Result, error) {
	groups := [][]Input{inputs}
	if perFile {
		groups = nil
		for _, in := range inputs {
			groups = append(groups, []Input{in})
		}
	}
	var results []*report.Result
	for _, g := range groups {
		res, err := Run(g, cfg)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

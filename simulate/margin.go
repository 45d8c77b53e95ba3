package simulate

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// MarginOptions tune FindMargins.
type MarginOptions struct {
	Options
	// Runs is how many seeds (from the scenario's) must all stay clean at
	// the provider; Resolution is the step of the margins tried (0: 0.1 ms).
	Runs       int
	Resolution time.Duration
	// Sweep, when above 1, also runs every strategy at that many margins
	// evenly spread from 0 to the largest bound (all seeds each), for a
	// chart of violations and throughput against the margin.
	Sweep int
}

// MarginResult is, per strategy, the smallest margin that keeps every run
// clean at the provider.
type MarginResult struct {
	Scenario   string
	Seed       uint64
	Runs       int
	Resolution time.Duration
	Rules      []rule.Rule
	Strategies []StrategyMargin
	// Margins are the sweep's margins; each strategy's Sweep follows them.
	Margins []time.Duration
}

// StrategyMargin is one strategy's search.
type StrategyMargin struct {
	Name string
	// ViolatingAtZero counts the runs violating at the provider with no
	// margin.
	ViolatingAtZero int
	// Bound is where the search starts from above: the spread of the
	// delays from admission to the provider, max - min of their
	// distributions, or the largest spread observed over the runs when a
	// distribution is unbounded (Observed).
	Bound    time.Duration
	Observed bool
	// Found is false when even Bound leaves a run violating: the strategy
	// is not exact on its own admissions, and no margin of that size helps.
	Found  bool
	Margin time.Duration
	// Zero and AtMargin are the mean run (duration from first to last send,
	// sends) at margin 0 and at Margin: what the margin costs.
	Zero, AtMargin RunCost
	// Tried counts the margins at which some seed ran, and Runs the runs
	// the search made (margin 0 included).
	Tried, Runs int
	// Sweep is, per margin of MarginResult.Margins, the share of runs
	// violating at the provider and the mean run.
	Sweep []SweepPoint
}

// SweepPoint is one strategy at one margin over every seed.
type SweepPoint struct {
	Violating int
	Cost      RunCost
}

// RunCost is the mean run of a batch of seeds.
type RunCost struct {
	Duration time.Duration
	Sends    float64
}

// FindMargins searches, for every strategy of s, the smallest margin (a
// multiple of the resolution) at which none of the runs violates at the
// provider. A limiter exact on its admissions needs no more than the spread
// of the path delays (semantics: t_i - t_(i-N) >= W + m - (d_(i-N) - d_i)
// >= W when m >= max d - min d), so the search never goes past it. It
// assumes that a margin that keeps a run clean keeps it clean when widened,
// which holds for the bound: then each seed has a threshold, the margin
// sought is the largest, and search finds it seed by seed.
func FindMargins(s *workload.Scenario, o MarginOptions) (*MarginResult, error) {
	if err := catalog.Validate(s); err != nil {
		return nil, err
	}
	if o.Runs < 1 {
		return nil, fmt.Errorf("simulate: runs must be at least 1")
	}
	if o.Resolution <= 0 {
		o.Resolution = 100 * time.Microsecond
	}
	names := o.Strategies
	if names == nil {
		names = s.Strategies
	}
	out := &MarginResult{Scenario: s.Name, Seed: s.Seed, Runs: o.Runs, Resolution: o.Resolution, Rules: s.Rules}
	pools := make([]virtual.Pool, runtime.GOMAXPROCS(0))
	defer func() {
		for i := range pools {
			pools[i].Close()
		}
	}()
	rs, err := rows(names, o.Options)
	if err != nil {
		return nil, err
	}
	for _, rw := range rs {
		sm, err := findMargin(&prober{s: s, st: rw.st, prog: rw.prog, o: o, pools: pools})
		if err != nil {
			return nil, err
		}
		out.Strategies = append(out.Strategies, sm)
	}
	if o.Sweep > 1 {
		return out, sweep(s, out, o, pools)
	}
	return out, nil
}

// sweep runs every strategy at o.Sweep margins from 0 to the largest bound.
func sweep(s *workload.Scenario, out *MarginResult, o MarginOptions, pools []virtual.Pool) error {
	var top time.Duration
	for _, sm := range out.Strategies {
		top = max(top, sm.Bound, sm.Margin)
	}
	for i := range o.Sweep {
		m := top * time.Duration(i) / time.Duration(o.Sweep-1)
		out.Margins = append(out.Margins, m.Round(o.Resolution))
	}
	for k := range out.Strategies {
		sm := &out.Strategies[k]
		p := &prober{s: s, st: catalog.Strategy{Name: sm.Name}, o: o, pools: pools}
		if st, ok := catalog.Lookup(sm.Name); ok {
			p.st = st
		} else {
			p.prog = o.Exec
		}
		for _, m := range out.Margins {
			runs, err := p.run(m, allSeeds(o.Runs))
			if err != nil {
				return err
			}
			sm.Sweep = append(sm.Sweep, SweepPoint{Violating: violating(runs), Cost: meanCost(runs)})
		}
	}
	return nil
}

func findMargin(p *prober) (StrategyMargin, error) {
	sm := StrategyMargin{Name: p.st.Name}
	zero, err := p.run(0, allSeeds(p.o.Runs))
	if err != nil {
		return sm, err
	}
	sm.ViolatingAtZero, sm.Zero, sm.AtMargin = violating(zero), meanCost(zero), meanCost(zero)
	if sm.ViolatingAtZero > 0 {
		bound, ok := pathBound(p.s, p.st)
		if !ok {
			for _, r := range zero {
				bound = max(bound, r.spread)
			}
			sm.Observed = true
		}
		sm.Bound = bound
		hi := (bound + p.o.Resolution - 1) / p.o.Resolution // in steps of the resolution
		found, k, at, err := search(p.steps, zero, int64(hi))
		if err != nil {
			return sm, err
		}
		if found {
			sm.Margin, sm.AtMargin = time.Duration(k)*p.o.Resolution, meanCost(at)
		}
		sm.Found = found
	} else {
		sm.Found = true
	}
	sm.Tried, sm.Runs = len(p.tried), p.runs
	return sm, nil
}

// stepRunner runs seeds (offsets from the first) at a margin of k steps of
// the resolution, returning their runs in the same order.
type stepRunner func(k int64, seeds []int) ([]seedRun, error)

// searchBlock is how many seeds search runs at once at one margin: fixed,
// so that which runs it makes does not depend on the number of cores.
const searchBlock = 16

// search finds the smallest number of steps k <= hi at which every seed
// runs clean, given each seed's run at 0, and returns every seed's run at
// k; found is false when some seed still violates at hi.
//
// If widening the margin never breaks a clean run, each seed has a
// threshold (clean at every step from it on) and k is the largest. Seeds
// are taken one at a time, in order of how far their tightest window fell
// short at 0 (the likely largest first, so that k settles early), seed
// order breaking ties: a seed is run at the largest threshold k found so
// far, and only one that still violates there is bisected between k and hi,
// raising k. Runs at k go in blocks of searchBlock seeds over the cores,
// read in order: the first that violates is bisected, and the block resumes
// after it. A last pass runs at k every seed not yet run there, for the
// cost at the margin and to see every seed clean; a seed violating there
// (widening broke it) is bisected in turn.
func search(run stepRunner, zero []seedRun, hi int64) (found bool, k int64, at []seedRun, err error) {
	n := len(zero)
	at = make([]seedRun, n)
	cleanAt := make([]int64, n) // the step of at[i]; -1 while seed i is known only to violate
	lo := make([]int64, n)      // a step at which seed i violates
	var order []int
	for i, z := range zero {
		at[i] = z
		if z.violating {
			cleanAt[i] = -1
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(zero[b].shortfall, zero[a].shortfall) })
	for i := 0; i < len(order); {
		block := order[i:min(i+searchBlock, len(order))]
		var todo []int
		for _, s := range block {
			if cleanAt[s] < 0 && lo[s] < k {
				todo = append(todo, s)
			}
		}
		if err := record(run, k, todo, cleanAt, lo, at); err != nil {
			return false, 0, nil, err
		}
		next := i + len(block)
		for j, s := range block {
			if cleanAt[s] >= 0 {
				continue
			}
			if k, found, err = bisect(run, s, k, hi, cleanAt, at); !found || err != nil {
				return false, 0, nil, err
			}
			next = i + j + 1
			break
		}
		i = next
	}
	for {
		var todo []int
		for s := range n {
			if cleanAt[s] != k {
				todo = append(todo, s)
			}
		}
		if err := record(run, k, todo, cleanAt, lo, at); err != nil {
			return false, 0, nil, err
		}
		s := slices.IndexFunc(todo, func(s int) bool { return cleanAt[s] != k })
		if s < 0 {
			return true, k, at, nil
		}
		if k, found, err = bisect(run, todo[s], k, hi, cleanAt, at); !found || err != nil {
			return false, 0, nil, err
		}
	}
}

// record runs seeds at step k and notes each as clean there (with its run)
// or violating.
func record(run stepRunner, k int64, seeds []int, cleanAt, lo []int64, at []seedRun) error {
	runs, err := run(k, seeds)
	if err != nil {
		return err
	}
	for j, s := range seeds {
		if runs[j].violating {
			lo[s] = k
		} else {
			cleanAt[s], at[s] = k, runs[j]
		}
	}
	return nil
}

// bisect finds the threshold of seed s, which violates at step k: the
// smallest step up to hi at which it runs clean, if any. It halves [0, hi]
// as a bisection of every seed at once would, taking the steps up to k as
// violating without running them: a seed whose runs are not monotone in
// the margin then lands where that bisection would have taken it.
func bisect(run stepRunner, s int, k, hi int64, cleanAt []int64, at []seedRun) (int64, bool, error) {
	if k >= hi {
		return 0, false, nil
	}
	var lo int64
	for top := true; hi-lo > 1 || top; top = false {
		mid := lo + (hi-lo)/2
		if top {
			mid = hi
		} else if mid <= k {
			lo = mid
			continue
		}
		r, err := run(mid, []int{s})
		if err != nil {
			return 0, false, err
		}
		switch {
		case r[0].violating && top:
			return 0, false, nil
		case r[0].violating:
			lo = mid
		default:
			hi, cleanAt[s], at[s] = mid, mid, r[0]
		}
	}
	return hi, true, nil
}

// pathBound returns max - min of the delay from admission to arrival at
// the provider, from the distributions, when they are bounded. For the
// Redis strategies the reply leg is on that path too.
func pathBound(s *workload.Scenario, st catalog.Strategy) (time.Duration, bool) {
	var lo, hi time.Duration
	for w := range s.Workers {
		l, h, ok := s.SendDelayFor(w).Bounds()
		if !ok {
			return 0, false
		}
		if w == 0 || l < lo {
			lo = l
		}
		hi = max(hi, h)
	}
	if st.NeedsRedis {
		l, h, ok := s.RedisRTT.Bounds()
		if !ok {
			return 0, false
		}
		lo += l - l/2
		hi += h - h/2
	}
	return hi - lo, true
}

// seedRun is what the search keeps of one run.
type seedRun struct {
	violating bool // at the provider
	dur       time.Duration
	sends     int
	spread    time.Duration // StrategyResult.PathSpread
	// shortfall is how much shorter than its window the tightest span of
	// Limit+1 arrivals was, over the rules: an ordering hint, not a verdict,
	// set for the runs at margin 0 only.
	shortfall time.Duration
}

// prober runs one strategy of a scenario on seeds at a margin, over the
// cores, each core's runs reusing one pool (coroutines, in-process Redis).
type prober struct {
	s     *workload.Scenario
	st    catalog.Strategy
	prog  *adapter.Program // the adapter program of st, if any
	o     MarginOptions
	pools []virtual.Pool
	runs  int                        // runs made
	tried map[time.Duration]struct{} // the margins they were made at
}

// run runs seeds (offsets from the scenario's seed) at margin m and
// returns their runs in the same order. The runs do not depend on which
// core made them.
func (p *prober) run(m time.Duration, seeds []int) ([]seedRun, error) {
	if len(seeds) == 0 {
		return nil, nil
	}
	if p.tried == nil {
		p.tried = map[time.Duration]struct{}{}
	}
	p.tried[m] = struct{}{}
	p.runs += len(seeds)
	sc := *p.s
	sc.Margin = m
	out := make([]seedRun, len(seeds))
	errs := make([]error, len(seeds))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for g := range min(len(p.pools), len(seeds)) {
		wg.Add(1)
		go func(pool *virtual.Pool) {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= len(seeds) {
					return
				}
				r, err := runRow(&sc, row{st: p.st, prog: p.prog}, p.s.Seed+uint64(seeds[j]), p.o.Options, pool)
				if err != nil {
					errs[j] = err
					next.Store(int64(len(seeds))) // stop the others early
					continue
				}
				out[j] = seedRun{violating: r.Violations() > 0, dur: r.Duration, sends: len(r.Sends),
					spread: r.PathSpread}
				if m == 0 { // only the runs at 0 order the seeds
					out[j].shortfall = shortfall(r.Sends, p.s.Rules)
				}
			}
		}(&p.pools[g])
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// steps runs seeds at k steps of the resolution.
func (p *prober) steps(k int64, seeds []int) ([]seedRun, error) {
	return p.run(time.Duration(k)*p.o.Resolution, seeds)
}

// shortfall is the most by which Limit+1 consecutive sends fit in less than
// their rule's window (0 when none do).
func shortfall(sends []int64, rules []rule.Rule) time.Duration {
	var d int64
	for _, r := range rules {
		for i := r.Limit; i < len(sends); i++ {
			d = max(d, int64(r.Window)-(sends[i]-sends[i-r.Limit]))
		}
	}
	return time.Duration(d)
}

func allSeeds(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func violating(runs []seedRun) int {
	n := 0
	for _, r := range runs {
		if r.violating {
			n++
		}
	}
	return n
}

// meanCost is the mean run of runs.
func meanCost(runs []seedRun) RunCost {
	var dur, sends int64
	for _, r := range runs {
		dur += int64(r.dur)
		sends += int64(r.sends)
	}
	return RunCost{Duration: time.Duration(dur / int64(len(runs))), Sends: float64(sends) / float64(len(runs))}
}

// WriteMarginsText writes the search per strategy: runs violating at
// margin 0, the margin found, its bound, and what it costs.
func WriteMarginsText(w io.Writer, r *MarginResult) error {
	fmt.Fprintf(w, "scenario %s, rules %s: the smallest margin (to %v) at which none of %d runs (seeds %d to %d) violates at the provider\n\n",
		r.Scenario, ruleList(r.Rules), r.Resolution, r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1)
	var t table
	t.add("strategy", "violating at 0", "margin", "bound", "duration at 0", "at margin", "cost")
	for _, sm := range r.Strategies {
		margin, bound, at, cost := sm.Margin.String(), "-", "-", "-"
		if sm.Bound > 0 {
			bound = sm.Bound.Round(r.Resolution).String()
			if sm.Observed {
				bound += " (observed)"
			}
		}
		if !sm.Found {
			margin = "none up to the bound"
		} else {
			at = durationText(sm.AtMargin.Duration)
			cost = costText(sm)
		}
		t.add(sm.Name, shareText(sm.ViolatingAtZero, r.Runs), margin, bound, durationText(sm.Zero.Duration), at, cost)
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, "\nthe checker judges the arrivals at the provider against the rules as written; the limiters\n"+
		"enforce every window the margin wider. The bound is the spread of the delays from admission to\n"+
		"arrival (max - min), which is always enough for a limiter exact on its own admissions; cost is\n"+
		"the change in the mean time from first to last send\n")
	return err
}

func costText(sm StrategyMargin) string {
	if sm.Zero.Duration == 0 {
		return "-"
	}
	pct := 100 * (float64(sm.AtMargin.Duration)/float64(sm.Zero.Duration) - 1)
	return fmt.Sprintf("%+.1f%%", pct)
}

// WriteMarginsJSON writes the search as JSON, durations in integer
// nanoseconds.
func WriteMarginsJSON(w io.Writer, r *MarginResult) error {
	type cost struct {
		DurationNs int64   `json:"duration_ns"`
		SendsMean  float64 `json:"sends_mean"`
	}
	type strat struct {
		Name            string `json:"name"`
		ViolatingAtZero int    `json:"runs_violating_at_zero"`
		Found           bool   `json:"found"`
		MarginNs        int64  `json:"margin_ns"`
		BoundNs         int64  `json:"bound_ns"`
		BoundObserved   bool   `json:"bound_observed,omitempty"`
		MarginsTried    int    `json:"margins_tried"`
		RunsSimulated   int    `json:"runs_simulated"`
		AtZero          cost   `json:"at_zero"`
		AtMargin        cost   `json:"at_margin"`
	}
	out := struct {
		buildinfo.Header
		Scenario     string  `json:"scenario"`
		Seed         uint64  `json:"seed"`
		Runs         int     `json:"runs"`
		ResolutionNs int64   `json:"resolution_ns"`
		Strategies   []strat `json:"strategies"`
	}{Header: buildinfo.NewHeader(), Scenario: r.Scenario, Seed: r.Seed, Runs: r.Runs, ResolutionNs: int64(r.Resolution), Strategies: []strat{}}
	for _, sm := range r.Strategies {
		out.Strategies = append(out.Strategies, strat{
			Name: sm.Name, ViolatingAtZero: sm.ViolatingAtZero, Found: sm.Found, MarginNs: int64(sm.Margin),
			BoundNs: int64(sm.Bound), BoundObserved: sm.Observed, MarginsTried: sm.Tried, RunsSimulated: sm.Runs,
			AtZero:   cost{int64(sm.Zero.Duration), round(sm.Zero.Sends, 1e3)},
			AtMargin: cost{int64(sm.AtMargin.Duration), round(sm.AtMargin.Sends, 1e3)},
		})
	}
	return encode(w, out)
}

// ReportMargins runs FindMargins, writes its report as text or JSON, and
// returns it.
func ReportMargins(w io.Writer, s *workload.Scenario, o MarginOptions, format string) (*MarginResult, error) {
	r, err := FindMargins(s, o)
	if err != nil {
		return nil, err
	}
	if format == "json" {
		return r, WriteMarginsJSON(w, r)
	}
	return r, WriteMarginsText(w, r)
}

// SweepFor is the sweep a margin chart needs (11 margins), or none when no
// chart is wanted (an empty directory).
func SweepFor(plotDir string) int {
	if plotDir == "" {
		return 0
	}
	return 11
}

package simulate

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/rule"
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
	// Tried counts the margins run.
	Tried int
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
// provider, by bisection between 0 and the bound. A limiter exact on its
// admissions needs no more than the spread of the path delays
// (semantics: t_i - t_(i-N) >= W + m - (d_(i-N) - d_i) >= W when
// m >= max d - min d), so the search never goes past it. It assumes that a
// margin that keeps every run clean keeps them clean when widened, which
// holds for the bound and is what makes bisection apply.
func FindMargins(s *Scenario, o MarginOptions) (*MarginResult, error) {
	if err := s.Validate(); err != nil {
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
	for _, name := range names {
		st, ok := Lookup(name)
		if !ok {
			return nil, fmt.Errorf("simulate: unknown strategy %q (known: %s)", name, strategyNames())
		}
		sm, err := findMargin(s, st, o)
		if err != nil {
			return nil, err
		}
		out.Strategies = append(out.Strategies, sm)
	}
	if o.Sweep > 1 {
		return out, sweep(s, out, o)
	}
	return out, nil
}

// sweep runs every strategy at o.Sweep margins from 0 to the largest bound.
func sweep(s *Scenario, out *MarginResult, o MarginOptions) error {
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
		st, _ := Lookup(sm.Name)
		for _, m := range out.Margins {
			b, err := runBatch(s, st, m, o, false)
			if err != nil {
				return err
			}
			sm.Sweep = append(sm.Sweep, SweepPoint{Violating: b.violating, Cost: b.cost})
		}
	}
	return nil
}

func findMargin(s *Scenario, st Strategy, o MarginOptions) (StrategyMargin, error) {
	sm := StrategyMargin{Name: st.Name}
	zero, err := runBatch(s, st, 0, o, false)
	if err != nil {
		return sm, err
	}
	sm.ViolatingAtZero, sm.Zero, sm.AtMargin, sm.Tried = zero.violating, zero.cost, zero.cost, 1
	if zero.violating == 0 {
		sm.Found = true
		return sm, nil
	}
	bound, ok := pathBound(s, st)
	if !ok {
		bound, sm.Observed = zero.spread, true
	}
	sm.Bound = bound
	res := o.Resolution
	hi := (bound + res - 1) / res // in steps of the resolution
	lo := time.Duration(0)        // known to violate
	top, err := runBatch(s, st, hi*res, o, true)
	if err != nil {
		return sm, err
	}
	sm.Tried++
	if top.violating > 0 {
		return sm, nil
	}
	sm.Found, sm.AtMargin = true, top.cost
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		b, err := runBatch(s, st, mid*res, o, true)
		if err != nil {
			return sm, err
		}
		sm.Tried++
		if b.violating > 0 {
			lo = mid
		} else {
			hi, sm.AtMargin = mid, b.cost
		}
	}
	sm.Margin = hi * res
	return sm, nil
}

// pathBound returns max - min of the delay from admission to arrival at
// the provider, from the distributions, when they are bounded. For the
// Redis strategies the reply leg is on that path too.
func pathBound(s *Scenario, st Strategy) (time.Duration, bool) {
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

type batch struct {
	violating int
	cost      RunCost
	spread    time.Duration
}

// runBatch runs st over the seeds at margin m; with stop it gives up at the
// first run that violates (its cost figures then mean nothing).
func runBatch(s *Scenario, st Strategy, m time.Duration, o MarginOptions, stop bool) (batch, error) {
	sc := *s
	sc.Margin = m
	var (
		next, violating atomic.Int64
		mu              sync.Mutex
		b               batch
		dur             int64
		sends           int64
		firstErr        error
		wg              sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(o.Runs) || (stop && violating.Load() > 0) {
					return
				}
				r, err := RunStrategy(&sc, st, s.Seed+uint64(i), o.Options)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				dur += int64(r.Duration)
				sends += int64(len(r.Sends))
				b.spread = max(b.spread, r.PathSpread)
				mu.Unlock()
				if err == nil && r.Violations() > 0 {
					violating.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return b, firstErr
	}
	b.violating = int(violating.Load())
	b.cost = RunCost{Duration: time.Duration(dur / int64(o.Runs)), Sends: float64(sends) / float64(o.Runs)}
	return b, nil
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
			BoundNs: int64(sm.Bound), BoundObserved: sm.Observed, MarginsTried: sm.Tried,
			AtZero:   cost{int64(sm.Zero.Duration), round(sm.Zero.Sends, 1e3)},
			AtMargin: cost{int64(sm.AtMargin.Duration), round(sm.AtMargin.Sends, 1e3)},
		})
	}
	return encode(w, out)
}

// ReportMargins runs FindMargins, writes its report as text or JSON, and
// returns it.
func ReportMargins(w io.Writer, s *Scenario, o MarginOptions, format string) (*MarginResult, error) {
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

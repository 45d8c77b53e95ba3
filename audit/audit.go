package audit

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// Options describe an audit.
type Options struct {
	Rules    []rule.Rule
	Boundary rule.Boundary
	// Strategies are the library strategies audited (nil: all of them).
	Strategies []string
	// Config is the setting audited as users write it.
	Config catalog.LibConfig
	// Lateness and OpCost are the runtime model, as in a scenario.
	Lateness workload.Dist
	OpCost   workload.Dist
	// Seeds runs each workload on seeds Seed .. Seed+Seeds-1, and Verify
	// seeds (from Seed on) confirm a suggested setting.
	Seed   uint64
	Seeds  int
	Verify int
	// NoSearch skips the search for a safe setting.
	NoSearch bool
	// SearchDir, when set, turns on the worst-case search: per strategy,
	// SearchTries schedules (0: DefaultSearchTries), the worst written to
	// SearchDir as a scenario that `rlcheck simulate` replays.
	SearchDir   string
	SearchTries int
	// ProviderKinds judges every run's sends as a sliding, a fixed (aligned
	// to the epoch) and a bucket provider (burst N refilled N per W) count
	// the rules' N/W too (Outcome.Kinds).
	ProviderKinds bool
	// Exec, when set, audits every strategy of this adapter program too
	// (docs/adapters.md), after the Go designs of Strategies; with Exec,
	// a nil Strategies audits no Go design.
	Exec *adapter.Program
}

// DefaultOptions are the audit's defaults for rules: the libraries as users
// configure them, on a runtime that wakes sleepers 0.1-3 ms late.
func DefaultOptions(rules []rule.Rule) Options {
	return Options{
		Rules:    rules,
		Config:   libs.Default(),
		Lateness: workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond},
		OpCost:   workload.Dist{Kind: workload.Uniform, A: 3 * time.Microsecond, B: 6 * time.Microsecond},
		Seed:     1,
		Seeds:    3,
		Verify:   10,
	}
}

// Report is a whole audit.
type Report struct {
	Rules      []rule.Rule
	Boundary   rule.Boundary
	Workloads  []Workload
	Seed       uint64
	Seeds      int
	Verify     int
	Lateness   workload.Dist
	OpCost     workload.Dist
	Strategies []StrategyAudit
	// Worst are the worst schedules found, per strategy, with SearchDir.
	Worst []Worst
	// Searched is set when the search for safe settings ran.
	Searched bool
	// ProviderKinds is Options.ProviderKinds.
	ProviderKinds bool
	// Skipped are the strategies left out: for a weighted contract, those
	// that meter no costs.
	Skipped []Skipped
	// Delay is the longest a send lags its decision under the runtime
	// (sendDelay), which every suggestion assumes.
	Delay time.Duration
	// Sliding are the rules the search keeps, each rule's sliding
	// equivalent (itself when sliding), and KeptAs why, for those changed.
	Sliding []rule.Rule
	KeptAs  []string
}

// StrategyAudit is one library strategy's audit.
type StrategyAudit struct {
	Name   string
	Config catalog.LibConfig
	// Outcomes are per workload, over Seeds seeds, with Config.
	Outcomes []Outcome
	// Safe is the suggested setting (nil when the search found none), and
	// SafeOutcomes its outcomes over Verify seeds, all without violations.
	Safe         *catalog.LibConfig
	SafeOutcomes []Outcome
	// SafeVerdicts say how each rule of Safe stands: its most sends in one
	// window beside its analytic worst case.
	SafeVerdicts []RuleVerdict
	// Bounds are the analytic worst cases of Config.
	Bounds []Bound
	// Tried counts the settings the search ran, Refuted those the analysis
	// ruled out without a run.
	Tried   int
	Refuted int
	// Rejected says why the last setting that ran clean was not suggested.
	Rejected string
	// Crowds are what Safe costs callers arriving together: the shortest
	// rule's N of them and three times as many.
	Crowds []Crowd

	design design
}

// Outcome is one workload's result over several seeds, as the checker
// judged each run.
type Outcome struct {
	Workload string
	Runs     int
	// RunsWithViolations counts runs with any violation.
	RunsWithViolations int
	// Sends is the mean number of sends per run; Refused counts the calls
	// refused at once over the runs (a cost above a limiter's burst).
	Sends   int
	Refused int
	Rules   []RuleOutcome
	// Kinds are the same runs judged as sliding, fixed and bucket
	// providers count, with Options.ProviderKinds.
	Kinds []KindOutcome
}

// RuleOutcome is one rule over the runs of a workload.
type RuleOutcome struct {
	Rule rule.Rule
	// Violations is summed over the runs; MaxInWindow is the most sends
	// any run put in one window.
	Violations  int64
	MaxInWindow int64
}

// Violations returns the violations over every rule.
func (o *Outcome) Violations() int64 {
	var n int64
	for _, r := range o.Rules {
		n += r.Violations
	}
	return n
}

// Run audits each strategy of opt.
func Run(opt Options) (*Report, error) {
	if len(opt.Rules) == 0 {
		return nil, fmt.Errorf("audit: no rules")
	}
	if err := opt.Config.Validate(); err != nil {
		return nil, err
	}
	if opt.Seeds < 1 || opt.Verify < 1 {
		return nil, fmt.Errorf("audit: seeds and verify must be at least 1")
	}
	if err := checkKinds(&opt); err != nil {
		return nil, err
	}
	all, err := designsOf(&opt)
	if err != nil {
		return nil, err
	}
	ds, skipped := costStrategies(opt.Rules, all)
	rep := &Report{
		Rules: opt.Rules, Boundary: opt.Boundary, Workloads: workloadsFor(opt.Rules),
		Seed: opt.Seed, Seeds: opt.Seeds, Verify: opt.Verify, Lateness: opt.Lateness, OpCost: opt.OpCost,
		Searched: !opt.NoSearch, ProviderKinds: opt.ProviderKinds, Skipped: skipped, Delay: sendDelay(&opt),
	}
	so, keptAs := slidingOptions(&opt)
	rep.Sliding, rep.KeptAs = so.Rules, keptAs
	// Strategies are audited side by side (each is independent, and its
	// results do not depend on the order), then reported in order.
	rep.Strategies = make([]StrategyAudit, len(ds))
	worst := make([]*Worst, len(ds))
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for k, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			rep.Strategies[k], worst[k], errs[k] = auditOne(&opt, rep.Workloads, d)
		}()
	}
	wg.Wait()
	for k := range ds {
		if errs[k] != nil {
			return nil, errs[k]
		}
		if worst[k] != nil {
			rep.Worst = append(rep.Worst, *worst[k])
		}
	}
	return rep, nil
}

// auditOne audits design d: its outcomes as configured, the safe setting
// unless opt.NoSearch, and the worst schedule with opt.SearchDir.
func auditOne(opt *Options, wls []Workload, d design) (StrategyAudit, *Worst, error) {
	sa := StrategyAudit{Name: d.Name(), Config: opt.Config, design: d}
	if slidingOnly(opt.Rules) {
		sa.Bounds = boundsOf(d, opt.Config, opt)
	}
	var err error
	if sa.Outcomes, err = run(opt, wls, d, opt.Config, opt.Seeds, false); err != nil {
		return sa, nil, err
	}
	// Every rule driven to the setting's analytic worst case, as given.
	for _, wl := range saturationWorkloads(d, opt.Config, opt) {
		o, err := runSaturation(opt, wl, d, opt.Config, opt.Seeds, false)
		if err != nil {
			return sa, nil, err
		}
		sa.Outcomes = append(sa.Outcomes, o...)
	}
	if !opt.NoSearch {
		// Rules of another kind are searched as the sliding rules that
		// imply them (slidingEquivalent).
		sopt, _ := slidingOptions(opt)
		if err := search(sopt, wls, &sa); err != nil {
			return sa, nil, err
		}
		if err := searchPerRule(sopt, wls, &sa); err != nil {
			return sa, nil, err
		}
		if sa.Safe != nil {
			if sa.Crowds, err = crowds(sopt, d, *sa.Safe); err != nil {
				return sa, nil, err
			}
		}
	}
	if opt.SearchDir == "" {
		return sa, nil, nil
	}
	tries := opt.SearchTries
	if tries <= 0 {
		tries = DefaultSearchTries
	}
	w, err := searchWorst(opt, d, opt.Config, tries)
	if err != nil {
		return sa, nil, err
	}
	if w.File, err = writeReplay(opt.SearchDir, opt, w); err != nil {
		return sa, nil, fmt.Errorf("audit: %w", err)
	}
	return sa, w, nil
}

// run runs every workload of design d on seeds seeds with cfg; with
// stopEarly it returns nil at the first run that violates.
func run(opt *Options, wls []Workload, d design, cfg catalog.LibConfig, seeds int, stopEarly bool) ([]Outcome, error) {
	st, err := d.Construct(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, 0, len(wls))
	for _, wl := range wls {
		sc := wl.Scenario(opt, d.Name())
		if err := d.Validate(sc); err != nil {
			return nil, err
		}
		o := Outcome{Workload: wl.Name, Runs: seeds, Rules: make([]RuleOutcome, len(opt.Rules))}
		sends := 0
		for k, r := range opt.Rules {
			o.Rules[k].Rule = r
		}
		results, err := runSeeds(sc, st, opt.Seed, seeds, stopEarly)
		if err != nil {
			return nil, err
		}
		for _, res := range results {
			if res == nil {
				continue
			}
			sends += len(res.Sends)
			o.Refused += res.Refused
			rs, err := outcomeRules(opt, sc, res)
			if err != nil {
				return nil, err
			}
			if addRuns(o.Rules, rs) {
				if stopEarly {
					return nil, nil
				}
				o.RunsWithViolations++
			}
			if opt.ProviderKinds {
				if err := judgeKinds(&o, res, sc.Units(), opt); err != nil {
					return nil, err
				}
			}
		}
		o.Sends = sends / seeds
		out = append(out, o)
	}
	return out, nil
}

// outcomeRules returns a run's figures per rule: the simulator's, which
// judged the limiters' sliding N/W, or the checker's under opt.Rules when
// the provider counts another kind.
func outcomeRules(opt *Options, sc *workload.Scenario, res *simulate.StrategyResult) ([]RuleOutcome, error) {
	if !slidingOnly(opt.Rules) {
		return judge(res, sc.Units(), opt.Rules, opt.Boundary)
	}
	rs := make([]RuleOutcome, len(res.Rules))
	for k, rr := range res.Rules {
		rs[k] = RuleOutcome{Rule: opt.Rules[k], Violations: rr.Violations, MaxInWindow: rr.MaxInWindow}
	}
	return rs, nil
}

// Scenario is the simulated scenario of wl for strategy name under opt.
func (wl Workload) Scenario(opt *Options, name string) *workload.Scenario {
	costs := wl.Costs
	if costs == nil {
		costs = costDists(opt.Rules)
	}
	return &workload.Scenario{
		Name: "audit-" + wl.Name, Rules: limiterRules(opt.Rules), Boundary: opt.Boundary, Strategies: []string{name},
		Callers: wl.Callers, Workers: max(wl.Workers, 1), Skew: wl.Skew, Arrivals: wl.Arrivals,
		Lateness: opt.Lateness, OpCost: opt.OpCost, Seed: opt.Seed, Costs: costs,
		Actual: wl.Actual, CallDuration: wl.CallDuration,
	}
}

// runSeeds runs st on seeds seed .. seed+n-1 over the machine's cores; with
// stopEarly, the runs not yet started are skipped once one violates (their
// results stay nil). Results are in seed order whatever the scheduling,
// and so is the error: the failed run of the lowest seed.
func runSeeds(sc *workload.Scenario, st runner, seed uint64, n int, stopEarly bool) ([]*simulate.StrategyResult, error) {
	out := make([]*simulate.StrategyResult, n)
	errs := make([]error, n)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		violated atomic.Bool
		next     atomic.Int64
	)
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || (stopEarly && violated.Load()) {
					return
				}
				res, err := st(sc, seed+uint64(i))
				mu.Lock()
				errs[i] = err
				if err == nil {
					out[i] = &res
					if res.Violations() > 0 {
						violated.Store(true)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

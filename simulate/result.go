package simulate

import (
	"time"

	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
)

// Result is one run of a scenario on one seed, strategy by strategy.
type Result struct {
	Scenario   string
	Seed       uint64
	Rules      []rule.Rule
	Strategies []StrategyResult
	// SendPath is set when the scenario puts a delay between admission and
	// the provider (Scenario.HasSendPath); Margin is the limiters' margin.
	SendPath bool
	Margin   time.Duration
}

// StrategyResult is what one strategy did. Every figure about violations
// comes from the checker.
type StrategyResult struct {
	Name string
	// Wall says the run's instants are wall-clock times (the scenario
	// started at one): reports name them as times of day.
	Wall bool
	// Sends are the instants the requests reach the provider, in
	// nanoseconds and in time order, and SendWorkers the worker of each:
	// what the verdict is about.
	Sends       []int64
	SendWorkers []int32
	// Admissions are the instants the limiter admitted each call (when
	// Acquire returned; for Redis, when the admitting script ran), in time
	// order; nil when the scenario has no send path, as they are Sends.
	Admissions []int64
	// PathSpread is the greatest minus the least delay from admission to
	// arrival at the provider over the calls: a margin that large keeps
	// this run clean at the provider.
	PathSpread time.Duration
	// SendCosts are each send's costs, in the order of Sends, one per unit
	// the rules meter (Scenario.Units); nil when they meter none.
	SendCosts []int64
	// SendActuals are each send's actual costs, laid out as SendCosts, and
	// SendSettled the instant the provider settled each send to them (its
	// arrival plus its call's duration), in the order of Sends; nil unless
	// the scenario settles its calls (workload.Scenario.Reserved).
	SendActuals []int64
	SendSettled []int64
	// AdmissionCosts are each admission's costs, in the order of
	// Admissions; nil without a send path or costs.
	AdmissionCosts []int64
	Calls          int // callers that arrived
	Cancelled      int // callers that gave up waiting (virtual deadline)
	// Refused counts the callers the limiter refused at once: a cost above
	// a rule's limit, which no wait admits (strategies.CostError).
	Refused int
	// Duration is from the first send to the last, as `rlcheck check` sees it.
	Duration time.Duration
	// MaxInFlight is the most calls sent and not yet finished at once.
	MaxInFlight int
	Rules       []RuleResult
	Sched       virtual.Stats
}

// RuleResult is one rule's outcome for one strategy.
type RuleResult struct {
	Rule rule.Rule
	// Violations and ViolationAt (the instant of each violating send) come
	// from the checker, as does MaxInWindow.
	Violations  int64
	ViolationAt []int64
	MaxInWindow int64
	// RecordViolations are the checker's violations among the
	// admissions: zero there and violations at the provider put the fault
	// on the send path.
	RecordViolations int64
	// Records is how many calls the strategy's bookkeeping recorded for the
	// rule (-1 when the strategy keeps no stats); Leaked is Records minus
	// sends: capacity spent with nothing sent.
	Records int64
	Leaked  int64
	// Waited is the time callers slept with this rule binding, and
	// FirstBound the first instant it made a caller wait (-1 if never).
	Waited     time.Duration
	FirstBound int64
}

// Violations returns the violations at the provider over every rule.
func (r *StrategyResult) Violations() int64 {
	var n int64
	for _, rr := range r.Rules {
		n += rr.Violations
	}
	return n
}

// RecordViolations returns the violations among the admissions over
// every rule.
func (r *StrategyResult) RecordViolations() int64 {
	var n int64
	for _, rr := range r.Rules {
		n += rr.RecordViolations
	}
	return n
}

// ViewsDiffer reports whether the provider and the admissions disagree.
func (r *StrategyResult) ViewsDiffer() bool {
	for _, rr := range r.Rules {
		if rr.Violations != rr.RecordViolations {
			return true
		}
	}
	return false
}

// ShowRecords reports whether a report should show the admissions'
// view beside the provider's: when the scenario has a send path, or when
// the two views differ for some strategy.
func (r *Result) ShowRecords() bool {
	for i := range r.Strategies {
		if r.Strategies[i].ViewsDiffer() {
			return true
		}
	}
	return r.SendPath
}

// RunsResult is a scenario repeated over seeds Seed, Seed+1, ....
type RunsResult struct {
	Scenario   string
	Seed       uint64
	Runs       int
	Rules      []rule.Rule
	Strategies []StrategyRuns
	SendPath   bool
	Margin     time.Duration
}

// StrategyRuns sums up one strategy over every seed.
type StrategyRuns struct {
	Name string
	// First is the run on the scenario's own seed, in full.
	First              StrategyResult
	RunsWithViolations int
	// RunsWithRecordViolations counts the runs with a violation among
	// the admissions.
	RunsWithRecordViolations int
	Rules                    []RuleRuns
	// MeanDuration is the mean, over the runs, of the time from the first
	// send to the last, and MeanSends the mean number of sends.
	MeanDuration time.Duration
	MeanSends    float64
	// PathSpread is the largest StrategyResult.PathSpread over the runs.
	PathSpread time.Duration
}

// RuleRuns is one rule's violations over the runs.
type RuleRuns struct {
	Rule rule.Rule
	// PerRun holds each run's violation count, in seed order.
	PerRun []int64
	Mean   float64
	P50    int64
	P95    int64
	Max    int64
}

// ShowRecords reports whether a report should show the admissions' view:
// with a send path, or when some strategy's runs differ between the views.
func (r *RunsResult) ShowRecords() bool {
	for i := range r.Strategies {
		st := &r.Strategies[i]
		if st.RunsWithViolations != st.RunsWithRecordViolations || st.First.ViewsDiffer() {
			return true
		}
	}
	return r.SendPath
}

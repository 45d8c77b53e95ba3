package simulate

import (
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Result is one run of a scenario on one seed, strategy by strategy.
type Result struct {
	Scenario   string
	Seed       uint64
	Rules      []rule.Rule
	Strategies []StrategyResult
}

// StrategyResult is what one strategy did. Every figure about violations
// comes from the checker.
type StrategyResult struct {
	Name string
	// Sends are the true send instants in nanoseconds, in time order, and
	// SendWorkers the worker of each.
	Sends       []int64
	SendWorkers []int32
	Calls       int // callers that arrived
	Cancelled   int // callers that gave up waiting (virtual deadline)
	// Duration is from the first send to the last, as `rlcheck check` sees it.
	Duration time.Duration
	// MaxInFlight is the most calls sent and not yet finished at once.
	MaxInFlight int
	Rules       []RuleResult
	Sched       SchedStats
}

// RuleResult is one rule's outcome for one strategy.
type RuleResult struct {
	Rule rule.Rule
	// Violations and ViolationAt (the instant of each violating send) come
	// from the checker, as does MaxInWindow.
	Violations  int64
	ViolationAt []int64
	MaxInWindow int64
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

// Violations returns the violations over every rule.
func (r *StrategyResult) Violations() int64 {
	var n int64
	for _, rr := range r.Rules {
		n += rr.Violations
	}
	return n
}

// RunsResult is a scenario repeated over seeds Seed, Seed+1, ....
type RunsResult struct {
	Scenario   string
	Seed       uint64
	Runs       int
	Rules      []rule.Rule
	Strategies []StrategyRuns
}

// StrategyRuns sums up one strategy over every seed.
type StrategyRuns struct {
	Name string
	// First is the run on the scenario's own seed, in full.
	First              StrategyResult
	RunsWithViolations int
	Rules              []RuleRuns
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

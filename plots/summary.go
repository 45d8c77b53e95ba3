package plots

import (
	"errors"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// StrategyResult is what the comparison charts know about one strategy.
type StrategyResult struct {
	Name string
	// Duration is how long the run shown took; it goes in the label.
	Duration time.Duration
	// Violations counts, per rule (indexed like Summary.Rules), the sends
	// that broke it in the run shown.
	Violations []int64
	// RunViolations holds the total violations of every run across seeds;
	// Distribution draws it.
	RunViolations []int64
	// Waited is, per rule, how long callers slept while that rule asked for
	// the longest wait, summed over callers; Waits draws it.
	Waited []time.Duration
}

// Summary is the input of the comparison, distribution and wait charts.
type Summary struct {
	// Title names the scenario, for example "seed: 30 callers, 5/1s + 12/3s".
	Title      string
	Rules      []rule.Rule
	Strategies []StrategyResult
}

func (s Summary) check(what string) error {
	if len(s.Strategies) == 0 {
		return errors.New("plots: " + what + ": no strategies to draw")
	}
	if len(s.Rules) == 0 {
		return errors.New("plots: " + what + ": no rules")
	}
	return nil
}

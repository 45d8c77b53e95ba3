package audit

import (
	"fmt"
	"strconv"
	"strings"
)

// How a rule of a setting stands, measured and analytic together.
const (
	// Reached: some workload put the limit's N sends in one window, none
	// more, and the analytic worst case is N.
	Reached = "reached"
	// AtBound: the workloads reached the analytic worst case, which lies
	// below the limit (another rule's limiter binds, or half the limit).
	AtBound = "at bound"
	// Proved: no workload reached the analytic worst case, which is within
	// the limit: safety rests on the analysis.
	Proved = "proved"
	// NotExercised: no workload reached the limit and no analysis bounds
	// the design: nothing supports a claim of safety.
	NotExercised = "not exercised"
	// Exceeds: the analytic worst case is over the limit.
	Exceeds = "over the limit"
	// Disagrees: a workload put more sends in one window than the analytic
	// worst case allows: the model or the implementation is wrong.
	Disagrees = "measured over analytic"
)

// RuleVerdict is one rule of a setting: the most sends measured in one
// window on any workload and seed, beside its analytic worst case.
type RuleVerdict struct {
	Bound
	Measured int64
	Status   string
}

// verdict judges each rule of a setting from its outcomes and bounds.
func verdict(outcomes []Outcome, bounds []Bound) []RuleVerdict {
	out := make([]RuleVerdict, len(bounds))
	for k, b := range bounds {
		v := RuleVerdict{Bound: b}
		for _, o := range outcomes {
			v.Measured = max(v.Measured, o.Rules[k].MaxInWindow)
		}
		n := int64(b.Rule.Limit)
		switch {
		case b.Worst != Unbounded && v.Measured > b.Worst:
			v.Status = Disagrees
		case b.Worst == Unbounded && v.Measured < n:
			v.Status = NotExercised
		case b.Worst == Unbounded || b.Worst > n || v.Measured > n:
			v.Status = Exceeds
		case v.Measured == n:
			v.Status = Reached
		case v.Measured == b.Worst:
			v.Status = AtBound
		default:
			v.Status = Proved
		}
		out[k] = v
	}
	return out
}

// allSafe reports whether every rule is reached, at its bound or proved.
func allSafe(vs []RuleVerdict) bool {
	for _, v := range vs {
		if v.Status != Reached && v.Status != AtBound && v.Status != Proved {
			return false
		}
	}
	return true
}

func boundList(bs []Bound) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = boundText(b)
	}
	return strings.Join(s, ", ")
}

func boundText(b Bound) string {
	if b.Worst == Unbounded {
		return "none"
	}
	return strconv.FormatInt(b.Worst, 10)
}

// verdictText says how each rule stands: "reached", or why not.
func verdictText(vs []RuleVerdict, rulesBy func(int) string) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		switch v.Status {
		case Reached:
			s[i] = Reached
		case AtBound, Proved:
			s[i] = fmt.Sprintf("%s ≤ %d", v.Status, v.Worst)
			if v.By != i {
				s[i] += " (" + rulesBy(v.By) + " binds)"
			}
		case Disagrees:
			s[i] = fmt.Sprintf("measured %d over analytic %d", v.Measured, v.Worst)
		default:
			s[i] = v.Status
		}
	}
	return strings.Join(s, ", ")
}

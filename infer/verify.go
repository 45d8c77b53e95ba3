package infer

import (
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// verify judges the fit's rules, as a contract file holds them
// (Rule.Exact), on the log with the exact checker under the fit's
// reading: 2xx calls judged, refused ones counted only under
// RefusedCount (checker.ObserveRefused). The bucket search samples rates
// and bursts, and its answer can break an accepted call; Broken counts
// those calls and BrokenLine names the first, so that such an answer is
// never called a fit.
func (f *Fit) verify(s []Send, units []string) {
	if !f.Fits || len(f.Rules) == 0 {
		return
	}
	rules := make([]rule.Rule, len(f.Rules))
	for i, r := range f.Rules {
		rules[i] = r.Exact()
	}
	last := int64(-1)
	chk := checker.New(checker.Config{Rules: rules, Units: units, OnViolation: func(_ int, v checker.Violation) {
		if v.Index != last {
			last = v.Index
			f.Broken++
			if f.BrokenLine == 0 {
				f.BrokenLine = v.Send.Ref
			}
		}
	}})
	costs := make([]int64, len(units))
	for _, c := range s {
		copy(costs, c.Cost)
		var err error
		switch {
		case !c.Refused:
			err = chk.ObserveCost(c.At, c.Line, costs)
		case f.Reading == RefusedCount:
			err = chk.ObserveRefused(c.At, c.Line, costs)
		}
		if err != nil {
			f.Broken, f.BrokenLine = f.Broken+1, c.Line // a sum past int64: no claim of a fit
			return
		}
	}
}

// Holds reports whether the fit explains every refusal and its rules
// break no accepted call.
func (f *Fit) Holds() bool { return f.Fits && f.Broken == 0 }

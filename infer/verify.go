package infer

import (
	"cmp"
	"slices"

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

// prune drops, one at a time, a rule whose removal leaves every refusal
// explained and no accepted call broken, judged by the exact checker on
// the rules as a contract file holds them: a redundant rule is never
// reported. Rules that explain fewer refusals are tried first. A fit that
// lost a rule was not the smallest its search claimed.
func (f *Fit) prune(s []Send, units []string) {
	if !f.Holds() || len(f.Rules) < 2 {
		return
	}
	order := make([]int, len(f.Rules))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(f.Rules[a].Explains, f.Rules[b].Explains) })
	dropped := map[int]bool{}
	for _, i := range order {
		if len(f.Rules)-len(dropped) < 2 {
			break
		}
		dropped[i] = true
		if !explainsAll(f.kept(dropped), f.Reading, s, units) {
			delete(dropped, i)
		}
	}
	if len(dropped) == 0 {
		return
	}
	f.Rules = f.kept(dropped)
	f.Smallest, f.Unproved = len(f.Rules) == 1, ""
	if !f.Smallest {
		f.Unproved = unprovedPruned
	}
}

// unprovedPruned says why a fit that lost a redundant rule is not proved
// the smallest.
const unprovedPruned = "a rule the search reported was redundant and is left out: a smaller set may exist"

// kept returns the fit's rules but the dropped ones.
func (f *Fit) kept(dropped map[int]bool) []Rule {
	var out []Rule
	for i, r := range f.Rules {
		if !dropped[i] {
			out = append(out, r)
		}
	}
	return out
}

// explainsAll reports whether rules, as a contract file holds them,
// refuse every refused call and no accepted one under reading rd: under
// RefusedCount a refused call is taken (checker.ObserveRefused) and must
// break some rule; under RefusedFree it takes nothing, and some rule must
// have had no room for it (checker.Next after its instant).
func explainsAll(rules []Rule, rd Reading, s []Send, units []string) bool {
	exact := make([]rule.Rule, len(rules))
	for i, r := range rules {
		exact[i] = r.Exact()
	}
	chk := checker.New(checker.Config{Rules: exact, Units: units})
	unitOf := func(r rule.Rule) int { return slices.Index(units, r.Unit) }
	costs := make([]int64, len(units))
	for _, c := range s {
		copy(costs, c.Cost)
		switch {
		case !c.Refused:
			if chk.ObserveCost(c.At, c.Line, costs) != nil {
				return false
			}
		case rd == RefusedCount:
			if chk.ObserveRefused(c.At, c.Line, costs) != nil {
				return false
			}
		default:
			if !refusedNow(chk, exact, unitOf, c.At, costs) {
				return false
			}
		}
	}
	rep := chk.Report()
	return rep.Violations() == 0 && rep.Explained == rep.Refused
}

// refusedNow reports whether some rule has no room at at for a call of
// costs.
func refusedNow(chk *checker.Checker, rules []rule.Rule, unitOf func(rule.Rule) int, at int64, costs []int64) bool {
	if chk.Last() > at {
		return false
	}
	for i, r := range rules {
		cost := int64(1)
		if u := unitOf(r); r.Unit != "" && u >= 0 {
			cost = costs[u]
		}
		if chk.Next(i, at, cost) > at {
			return true
		}
	}
	return false
}

// Holds reports whether the fit explains every refusal and its rules
// break no accepted call.
func (f *Fit) Holds() bool { return f.Fits && f.Broken == 0 }

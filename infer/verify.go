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
// never called a fit. The refusals are judged too: Missed counts those
// the rules as reported leave unexplained (a bucket's ranges bounded
// from outside can hold a point that explains them where the point named
// does not), MissedLine names the first, and such an answer is not
// called a fit either.
func (f *Fit) verify(s []Send, units []string) {
	if !f.Fits || len(f.Rules) == 0 {
		return
	}
	last := int64(-1)
	f.Missed, f.MissedLine = replayRules(f.Rules, f.Reading, s, units, func(_ int, v checker.Violation) {
		if v.Index != last {
			last = v.Index
			f.Broken++
			if f.BrokenLine == 0 {
				f.BrokenLine = v.Send.Ref
			}
		}
	})
	if f.Missed < 0 {
		f.Broken, f.BrokenLine, f.Missed, f.MissedLine = f.Broken+1, f.MissedLine, 0, 0 // a sum past int64: no claim of a fit
	}
}

// replayRules replays the log through rules, as a contract file holds
// them, under reading rd, onViolation seeing each accepted call they
// break, and returns the refusals they leave unexplained and the line of
// the first; -1 and the line where a sum passes int64. Under
// RefusedCount a refused call is taken (checker.ObserveRefused) and must
// break some rule; under RefusedFree it takes nothing, and some rule
// must have had no room for it (checker.Next after its instant).
func replayRules(rules []Rule, rd Reading, s []Send, units []string, onViolation func(int, checker.Violation)) (missed int, line int64) {
	missed, line = replayOnce(rules, rd, s, units, onViolation, false)
	if missed > 0 && line == 0 {
		_, line = replayOnce(rules, rd, s, units, nil, true)
	}
	return missed, line
}

// replayOnce is one replay of replayRules; under RefusedCount it names
// the first refusal left unexplained only when locate is set (a report
// per refusal until it is found).
func replayOnce(rules []Rule, rd Reading, s []Send, units []string, onViolation func(int, checker.Violation), locate bool) (missed int, line int64) {
	exact := make([]rule.Rule, len(rules))
	for i, r := range rules {
		exact[i] = r.Exact()
	}
	chk := checker.New(checker.Config{Rules: exact, Units: units, OnViolation: onViolation})
	unitOf := func(r rule.Rule) int { return slices.Index(units, r.Unit) }
	costs := make([]int64, len(units))
	explained := int64(0)
	for _, c := range s {
		copy(costs, c.Cost)
		var err error
		switch {
		case !c.Refused:
			err = chk.ObserveCost(c.At, c.Line, costs)
		case rd == RefusedCount:
			err = chk.ObserveRefused(c.At, c.Line, costs)
			if e := int64(0); err == nil && locate && line == 0 {
				if e = chk.Report().Explained; e == explained {
					line = c.Line
				}
				explained = e
			}
		case !refusedNow(chk, exact, unitOf, c.At, costs):
			missed++
			line = cmp.Or(line, c.Line)
		}
		if err != nil {
			return -1, c.Line
		}
	}
	if rep := chk.Report(); rd == RefusedCount {
		missed = int(rep.Refused - rep.Explained)
	}
	return missed, line
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
// refuse every refused call and no accepted one under reading rd (see
// replayRules).
func explainsAll(rules []Rule, rd Reading, s []Send, units []string) bool {
	broken := false
	missed, _ := replayRules(rules, rd, s, units, func(int, checker.Violation) { broken = true })
	return missed == 0 && !broken
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

// Holds reports whether the fit's rules, as reported, explain every
// refusal and break no accepted call.
func (f *Fit) Holds() bool { return f.Fits && f.Broken == 0 && f.Missed == 0 }

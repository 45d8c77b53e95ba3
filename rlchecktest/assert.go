package rlchecktest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// AssertCompliant reports, through t.Errorf, every rule that sends break,
// naming the first offending window of each; it returns true when all rules
// hold. Sends may come in any order; equal instants count as distinct sends.
// Instants are compared by their monotonic reading when they have one, so a
// wall-clock jump during the test cannot fake or hide a violation.
func AssertCompliant(t TB, sends []time.Time, rules ...rule.Rule) bool {
	t.Helper()
	if len(sends) == 0 {
		return true
	}
	base := sends[0]
	for _, s := range sends[1:] {
		if s.Before(base) {
			base = s
		}
	}
	ns := make([]int64, len(sends))
	for i, s := range sends {
		ns[i] = int64(s.Sub(base))
	}
	return assert(t, ns, rules, "first send at "+base.Format(time.RFC3339Nano))
}

// AssertCompliantNs is AssertCompliant over integer nanoseconds, for send
// times taken from a clock.Runtime or a log.
func AssertCompliantNs(t TB, sends []int64, rules ...rule.Rule) bool {
	t.Helper()
	if len(sends) == 0 {
		return true
	}
	ns := slices.Clone(sends)
	base := slices.Min(ns)
	for i := range ns {
		ns[i] -= base
	}
	return assert(t, ns, rules, fmt.Sprintf("first send at %d ns", base))
}

// TB is the part of testing.TB the assertions use, so that they can be
// checked with a fake; every *testing.T, *testing.B and *testing.F is one.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// assert checks ns (offsets from the first send, any order) and reports.
func assert(t TB, ns []int64, rules []rule.Rule, origin string) bool {
	t.Helper()
	if len(rules) == 0 {
		t.Errorf("rlchecktest: no rules to check %d sends against", len(ns))
		return false
	}
	slices.Sort(ns)
	rep, err := checker.Check(ns, checker.Config{Rules: rules, List: 1})
	if err != nil { // unreachable: ns is sorted
		t.Errorf("rlchecktest: %v", err)
		return false
	}
	ok := true
	for _, rr := range rep.Rules {
		if rr.Violations == 0 {
			continue
		}
		ok = false
		t.Errorf("%s", describe(rr, len(ns), origin))
	}
	return ok
}

// describe spells out the first window rr's rule found overfilled.
func describe(rr checker.RuleReport, sends int, origin string) string {
	var b strings.Builder
	v := rr.First
	if len(rr.Listed) > 0 {
		v = &rr.Listed[0]
	}
	fmt.Fprintf(&b, "rlchecktest: rule %s broken by %d of %d sends (most in one window: %d)", rr.Rule, rr.Violations, sends, rr.MaxInWindow)
	if v == nil {
		return b.String()
	}
	start := v.WindowStart.At
	fmt.Fprintf(&b, "\n  first offending window [+%v, +%v) holds %d sends, limit %d; send %d at +%v is one too many",
		time.Duration(start), time.Duration(start)+rr.Rule.Window, v.Count, rr.Rule.Limit, v.Index+1, time.Duration(v.Send.At))
	if len(v.Window) > 0 {
		at := make([]string, len(v.Window))
		for i, s := range v.Window {
			at[i] = "+" + time.Duration(s.At).String()
		}
		fmt.Fprintf(&b, "\n  sends in it: %s", strings.Join(at, ", "))
	}
	fmt.Fprintf(&b, "\n  (offsets from the %s)", origin)
	return b.String()
}

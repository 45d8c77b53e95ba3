package infer

import (
	"fmt"
	"slices"

	"github.com/rlcheck/rlcheck/rule"
)

// Declared sets a contract the user wrote beside the log, under the
// reading that fits it best.
type Declared struct {
	Rules   []DeclaredRule
	Reading Reading
	// Allowed counts the refused calls every declared rule admits: calls a
	// limiter keeping the contract would send and the provider refused. The
	// contract is looser than the provider's when Allowed > 0; AllowedLine
	// is the first such call.
	Allowed     int
	AllowedLine int64
	// Refused counts the accepted calls some declared rule refuses: the
	// provider took them, so the contract is stricter than it needs to be;
	// RefusedLine is the first.
	Refused     int
	RefusedLine int64
}

// DeclaredRule is one declared rule beside the log.
type DeclaredRule struct {
	Rule rule.Rule
	// AtLeast is the least limit the accepted calls allow in the rule's
	// window, kind and unit: for a window, the most calls (or units of the
	// rule's cost) the provider took in one window, each call's own
	// included; for a bucket, the least burst that admits every accepted
	// call at the declared rate under the reading. A limit below it leaves
	// AtLeast-Limit (or AtLeast-Burst) unused.
	AtLeast int
	// Refused counts the accepted calls this rule refuses.
	Refused int
}

// Declared reports the declared limit AtLeast is set against: the burst
// of a bucket, the limit of a window.
func (r DeclaredRule) Declared() int {
	if r.Rule.Kind == rule.Bucket {
		return r.Rule.Burst
	}
	return r.Rule.Limit
}

// Unused is how much of AtLeast the declared limit leaves unused, 0 when
// it allows as much or more.
func (r DeclaredRule) Unused() int { return max(0, r.AtLeast-r.Declared()) }

// Looser reports whether the contract allows calls the provider refused.
func (d *Declared) Looser() bool { return d.Allowed > 0 }

// UnitError is the error of a declared cost rule whose unit the log does
// not carry.
type UnitError struct{ Rule rule.Rule }

func (e *UnitError) Error() string {
	return fmt.Sprintf("rule %s: the log carries no %s costs", e.Rule, e.Rule.Unit)
}

// CheckDeclared returns an error naming the first rule infer cannot set
// beside a log whose costs are in units: it compares sliding windows,
// fixed windows aligned to the epoch and token buckets, on calls or on a
// unit the log carries (a *UnitError when it does not).
func CheckDeclared(rules []rule.Rule, units []string) error {
	for _, r := range rules {
		switch {
		case r.Kind != rule.Sliding && r.Kind != rule.Fixed && r.Kind != rule.Bucket:
			return fmt.Errorf("rule %s: infer compares sliding, fixed and bucket rules only", r)
		case r.Offset != 0, r.Zone != "":
			return fmt.Errorf("rule %s: infer compares fixed rules aligned to the epoch only", r)
		case r.Unit != "" && !slices.Contains(units, r.Unit):
			return &UnitError{Rule: r}
		}
	}
	return nil
}

// declare judges every call of d by the declared rules (which passed
// CheckDeclared with d's units) under reading rd; closed widens sliding
// windows by 1 ns (a bucket has no window edge to close).
func declare(d *sends, rules []rule.Rule, closed bool, rd Reading) *Declared {
	out := &Declared{Reading: rd}
	// admits[i]: every rule so far admits call i; refusedBy[i]: some
	// declared rule refuses call i.
	admits := make([]bool, len(d.at))
	for i := range admits {
		admits[i] = true
	}
	refusedBy := make([]bool, len(d.at))
	for _, r := range rules {
		dr := DeclaredRule{Rule: r}
		limit := int64(dr.Declared())
		most := d.declaredNeeds(r, closed, rd, limit, func(i int, need int64) {
			if need > limit {
				admits[i] = false
				if !d.refused[i] {
					dr.Refused++
					refusedBy[i] = true
				}
			}
		})
		if r.Kind == rule.Bucket && rd == RefusedCount {
			most = d.leastBurst(r)
		}
		dr.AtLeast = clampInt(max(most, 1))
		out.Rules = append(out.Rules, dr)
	}
	for i := range d.at {
		switch {
		case d.refused[i] && admits[i]:
			if out.Allowed++; out.Allowed == 1 {
				out.AllowedLine = d.line[i]
			}
		case !d.refused[i] && refusedBy[i]:
			if out.Refused++; out.Refused == 1 {
				out.RefusedLine = d.line[i]
			}
		}
	}
	return out
}

// declaredNeeds visits every call i with the limit rule r needs to admit
// it under reading rd (a bucket's burst; under RefusedCount, a refused
// call drains a bucket of burst limit that has room for it), and returns
// the most an accepted call needs.
func (d *sends) declaredNeeds(r rule.Rule, closed bool, rd Reading, limit int64, visit func(i int, need int64)) int64 {
	u := slices.Index(d.units, r.Unit)
	most := int64(0)
	see := func(i int, need int64) {
		if !d.refused[i] {
			most = max(most, need)
		}
		visit(i, need)
	}
	if r.Kind == rule.Bucket {
		d.bucketNeeds(u, r, rd, limit, see)
		return most
	}
	w := int64(r.Window)
	if closed && r.Kind == rule.Sliding {
		w++
	}
	d.walk(w, r.Kind, func(i, lo int) {
		before := int64(i - lo)
		if rd == RefusedFree {
			before = int64(d.acc[i] - d.acc[lo])
		}
		if u >= 0 {
			before = d.costAll[u][i] - d.costAll[u][lo]
			if rd == RefusedFree {
				before = d.costAcc[u][i] - d.costAcc[u][lo]
			}
		}
		see(i, before+d.costOf(u, i))
	})
	return most
}

// leastBurst is the least burst at r's rate that admits every accepted
// call under RefusedCount. The least under RefusedFree, where no refused
// call drains and the bucket's level does not depend on its burst, is a
// lower bound (a drain only deepens the bucket). Raising a burst to the
// most an accepted call needs at it until the accepted calls fit gives an
// upper bound, which on calls is the least: a refused call that drains a
// burst one larger leaves the bucket as empty as one that did not drain.
// On costs a refused call that drains at one burst may leave more room
// than one that drains at a smaller, so the bursts between the bounds are
// tried in turn, at most maxBurstScan of them; past that, the first not
// tried is returned: every smaller one was ruled out, so the provider
// allows at least that, a bound rather than the least. Each try and each
// raise is a walk over the log, and both are bounded.
func (d *sends) leastBurst(r rule.Rule) int64 {
	u := slices.Index(d.units, r.Unit)
	fits := func(b int64) (bool, int64) {
		most := d.declaredNeeds(r, false, RefusedCount, b, func(int, int64) {})
		return most <= b, most
	}
	lo := max(d.declaredNeeds(r, false, RefusedFree, 0, func(int, int64) {}), 1)
	hi := lo
	for raises := 0; raises < maxBurstRaises; raises++ {
		ok, most := fits(hi)
		if ok {
			break
		}
		hi = max(most, hi+1)
	}
	if u < 0 {
		return hi
	}
	for b := lo; b < hi; b++ {
		if b-lo >= maxBurstScan {
			return b
		}
		if ok, _ := fits(b); ok {
			return b
		}
	}
	return hi
}

// maxBurstScan bounds the bursts leastBurst tries between its bounds on
// a bucket of costs, each one walk over the log; maxBurstRaises bounds its
// raises (each a walk: a raise may gain a single unit, one refused call
// more draining), past which the burst reached is still a bound on calls,
// no smaller one fitting, and on costs the scan from the lower bound
// decides.
const (
	maxBurstScan   = 256
	maxBurstRaises = 64
)

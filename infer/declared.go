package infer

import (
	"fmt"

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
	// AtLeast is the least N the accepted calls allow in the rule's window
	// and kind: the provider took that many, so a limit below it leaves
	// AtLeast-Limit calls a window unused.
	AtLeast int
	// Refused counts the accepted calls this rule refuses.
	Refused int
}

// Looser reports whether the contract allows calls the provider refused.
func (d *Declared) Looser() bool { return d.Allowed > 0 }

// CheckDeclared returns an error naming the first rule infer cannot set
// beside a log: it counts calls (no cost rules) in sliding windows and in
// fixed windows aligned to the epoch.
func CheckDeclared(rules []rule.Rule) error {
	for _, r := range rules {
		switch {
		case r.Unit != "":
			return fmt.Errorf("rule %s: infer reads no costs yet; compare call rules", r)
		case r.Kind != rule.Sliding && r.Kind != rule.Fixed, r.Offset != 0, r.Zone != "":
			return fmt.Errorf("rule %s: infer compares sliding rules and fixed rules aligned to the epoch only", r)
		}
	}
	return nil
}

// declare judges every call of d by the declared rules (which passed
// CheckDeclared) under reading rd; closed widens sliding windows by 1 ns.
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
		w := int64(r.Window)
		if closed && r.Kind == rule.Sliding {
			w++
		}
		dr := DeclaredRule{Rule: r, AtLeast: 1}
		d.walk(w, r.Kind, func(i, lo int) {
			before := i - lo
			if rd == RefusedFree {
				before = int(d.acc[i] - d.acc[lo])
			}
			if before >= r.Limit {
				admits[i] = false
			}
			if !d.refused[i] {
				dr.AtLeast = max(dr.AtLeast, before+1)
				if before >= r.Limit {
					dr.Refused++
					refusedBy[i] = true
				}
			}
		})
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

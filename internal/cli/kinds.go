package cli

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// KindsSupported refuses what check cannot judge yet: cost rules and
// kinds other than sliding with the flags that assume sliding call windows
// (slidingFlags: --plot, --html, --metrics, --from, --to).
func KindsSupported(rules []rule.Rule, slidingFlags bool) error {
	if slidingFlags {
		return rule.RequireSlidingCalls(rules, "check with --plot, --html, --metrics, --from or --to")
	}
	return nil
}

// ChartKinds refuses, when the flags that chart or export windows are set
// (slidingFlags: simulate's --plot, --html, --metrics), a rule of a kind
// other than sliding: their figures assume sliding windows.
func ChartKinds(rules []rule.Rule, slidingFlags bool) error {
	for _, r := range rules {
		if slidingFlags && r.Kind != rule.Sliding {
			return fmt.Errorf("rule %s: simulate with --plot, --html or --metrics supports sliding rules only so far", r)
		}
	}
	return nil
}

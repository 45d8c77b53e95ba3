package cli

import "github.com/rlcheck/rlcheck/rule"

// KindsSupported refuses what check cannot judge yet: cost rules and
// kinds other than sliding with the flags that assume sliding call windows
// (slidingFlags: --plot, --html, --metrics, --from, --to).
func KindsSupported(rules []rule.Rule, slidingFlags bool) error {
	if slidingFlags {
		return rule.RequireSlidingCalls(rules, "check with --plot, --html, --metrics, --from or --to")
	}
	return nil
}

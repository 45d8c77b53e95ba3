package cli

import "github.com/rlcheck/rlcheck/rule"

// KindsSupported refuses what check cannot judge yet: cost rules (it reads
// no costs), and kinds other than sliding with the flags that assume
// sliding windows (slidingFlags: --plot, --html, --metrics, --from, --to).
func KindsSupported(rules []rule.Rule, slidingFlags bool) error {
	if err := rule.RequireCalls(rules, "check"); err != nil {
		return err
	}
	if slidingFlags {
		return rule.RequireSlidingCalls(rules, "check with --plot, --html, --metrics, --from or --to")
	}
	return nil
}

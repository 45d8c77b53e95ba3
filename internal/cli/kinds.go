package cli

import "github.com/rlcheck/rlcheck/rule"

// KindsSupported refuses what check cannot draw or export yet: cost rules
// and kinds other than sliding with the flags that assume sliding call
// windows (slidingFlags: --plot, --html, --metrics). Shards (--from, --to)
// take every rule; logcheck refuses the ones a shard cannot judge.
func KindsSupported(rules []rule.Rule, slidingFlags bool) error {
	if slidingFlags {
		return rule.RequireSlidingCalls(rules, "check with --plot, --html or --metrics")
	}
	return nil
}

package cli

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// KindsSupported refuses what check cannot draw yet: a chart (charts:
// --plot, --html) of a rule other than a sliding one. A sliding cost rule
// is drawn in its units; fixed windows and buckets have no timeline yet.
// Shards (--from, --to) take every rule; logcheck refuses the ones a shard
// cannot judge.
func KindsSupported(rules []rule.Rule, charts bool) error {
	if !charts {
		return nil
	}
	for _, r := range rules {
		if r.Kind != rule.Sliding {
			return fmt.Errorf("rule %s: --plot and --html draw sliding rules only so far (check judges it without them)", r)
		}
	}
	return nil
}

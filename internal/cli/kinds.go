package cli

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// ChartKinds refuses, when flags that chart windows are set (charts), a
// rule of a kind other than sliding: a timeline draws sliding windows only
// so far (a sliding cost rule in its units). what names the flags, as
// "--plot and --html". Shards (--from, --to) take every rule; logcheck
// refuses the ones a shard cannot judge.
func ChartKinds(rules []rule.Rule, charts bool, what string) error {
	if !charts {
		return nil
	}
	for _, r := range rules {
		if r.Kind != rule.Sliding {
			return fmt.Errorf("rule %s: %s draw sliding rules only so far", r, what)
		}
	}
	return nil
}

package cli

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// ChartKinds refuses, when flags that measure windows over time are set
// (charts), a rule of a kind other than sliding: simulate's --metrics
// gives the mean occupancy of a sliding window only so far (timelines
// draw every kind). what names the flags, as "--metrics".
func ChartKinds(rules []rule.Rule, charts bool, what string) error {
	if !charts {
		return nil
	}
	for _, r := range rules {
		if r.Kind != rule.Sliding {
			return fmt.Errorf("rule %s: %s measure sliding rules only so far", r, what)
		}
	}
	return nil
}

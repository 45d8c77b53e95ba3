package audit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// code returns the code a user writes for design d with cfg, one
// constructor per rule, so a suggestion can be pasted.
// A chain's constructors come in the order its limiters are asked.
func code(d design, cfg catalog.LibConfig, rules []rule.Rule) string {
	parts := make([]string, len(rules))
	for k, i := range cfg.AskOrder(len(rules)) {
		parts[k] = d.Code(cfg, i, rules[i])
	}
	return strings.Join(parts, "; ")
}

// goDuration writes d as a Go expression in the largest exact unit.
func goDuration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"},
		{time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d*%s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d", int64(d))
}

// settingWords describes cfg for design d in a few words.
func settingWords(d design, cfg catalog.LibConfig) string {
	var s string
	if f := d.Tuning().family; f == designWindows || f == designLogs || f == designExec {
		s = "N"
		if cfg.Half {
			s = "N/2"
		}
	} else if d.Tuning().family == designSlack {
		s = fmt.Sprintf("slack %d", cfg.Slack)
	} else if len(cfg.PerRule) > 0 {
		s = perRuleText(cfg.PerRule)
	} else if cfg.Burst == 0 {
		s = "burst N"
	} else {
		s = fmt.Sprintf("burst %d", cfg.Burst)
	}
	if cfg.UnitBurst > 0 {
		s += fmt.Sprintf(", %d units", cfg.UnitBurst)
	}
	if o := cfg.Order; o != nil && !slices.IsSorted(o) {
		s += ", asked " + orderText(o)
	}
	if cfg.Margin > 0 {
		s += fmt.Sprintf(", N per W+%v", cfg.Margin)
	} else {
		s += ", N per W"
	}
	return s
}

// perRuleText describes per-rule limiters, in rule order: "bursts
// 1·10·30, rates 10·491·9971" (tokens per window plus margin).
func perRuleText(ls []libs.RuleLimit) string {
	bs, ns := make([]string, len(ls)), make([]string, len(ls))
	for i, l := range ls {
		bs[i], ns[i] = strconv.Itoa(l.Burst), strconv.Itoa(l.Limit)
	}
	return "bursts " + strings.Join(bs, "·") + ", rates " + strings.Join(ns, "·")
}

// orderText is a chain's order as rule numbers from 1: "3·2·1" asks the
// third rule's limiter first.
func orderText(order []int) string {
	s := make([]string, len(order))
	for k, i := range order {
		s[k] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, "·")
}

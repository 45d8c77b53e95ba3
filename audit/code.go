package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/libs"
)

// Code returns the Go a user writes for strategy name with cfg, one
// constructor per rule, so a suggestion can be pasted.
func Code(name string, cfg libs.Config, rules []rule.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		per := r.Window + cfg.Margin
		if name == simulate.UberRatelimit {
			slack := fmt.Sprintf("ratelimit.WithSlack(%d)", cfg.Slack)
			if cfg.Slack == 0 {
				slack = "ratelimit.WithoutSlack"
			}
			parts[i] = fmt.Sprintf("ratelimit.New(%d, ratelimit.Per(%s), %s)", r.Limit, goDuration(per), slack)
			continue
		}
		burst := cfg.Burst
		if burst == 0 {
			burst = r.Limit
		}
		sec := strconv.FormatFloat(per.Seconds(), 'f', -1, 64)
		if !strings.Contains(sec, ".") {
			sec += ".0"
		}
		parts[i] = fmt.Sprintf("rate.NewLimiter(rate.Limit(%d/%s), %d)", r.Limit, sec, burst)
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

// Setting describes cfg for strategy name in a few words.
func Setting(name string, cfg libs.Config) string {
	var s string
	if name == simulate.UberRatelimit {
		s = fmt.Sprintf("slack %d", cfg.Slack)
	} else if cfg.Burst == 0 {
		s = "burst N"
	} else {
		s = fmt.Sprintf("burst %d", cfg.Burst)
	}
	if cfg.Margin > 0 {
		s += fmt.Sprintf(", N per W+%v", cfg.Margin)
	} else {
		s += ", N per W"
	}
	return s
}

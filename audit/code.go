package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// code returns the Go a user writes for strategy name with cfg, one
// constructor per rule, so a suggestion can be pasted.
func code(name string, cfg catalog.LibConfig, rules []rule.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		per := r.Window + cfg.Margin
		n := cfg.LimitFor(r.Limit)
		switch name {
		case catalog.RedisRate:
			parts[i] = fmt.Sprintf("redis_rate.Limit{Rate: %d, Period: %s, Burst: %d}", r.Limit, goDuration(per), cfg.BurstOf(r))
			continue
		case catalog.ThrottledMem, catalog.ThrottledRedis:
			parts[i] = fmt.Sprintf("throttled.RateQuota{MaxRate: throttled.PerDuration(%d, %s), MaxBurst: %d}", r.Limit, goDuration(per), cfg.BurstOf(r)-1)
			continue
		case catalog.UluleRedis:
			parts[i] = fmt.Sprintf("limiter.Rate{Period: %s, Limit: %d}", goDuration(per), n)
			continue
		case catalog.FixedWindow:
			parts[i] = fmt.Sprintf("INCR ⌊t/%s⌋, at most %d", goDuration(per), n)
			continue
		case catalog.TwoTrips, catalog.TimestampMember, catalog.GuideScript, catalog.RedisClientTime:
			parts[i] = fmt.Sprintf("%d per %s", n, goDuration(per))
			continue
		}
		if name == catalog.UberRatelimit {
			slack := fmt.Sprintf("ratelimit.WithSlack(%d)", cfg.Slack)
			if cfg.Slack == 0 {
				slack = "ratelimit.WithoutSlack"
			}
			parts[i] = fmt.Sprintf("ratelimit.New(%d, ratelimit.Per(%s), %s)", r.Limit, goDuration(per), slack)
			continue
		}
		l := limiterAt(name, cfg, i, r)
		sec := strconv.FormatFloat(per.Seconds(), 'f', -1, 64)
		if !strings.Contains(sec, ".") {
			sec += ".0"
		}
		parts[i] = fmt.Sprintf("rate.NewLimiter(rate.Limit(%d/%s), %d)", l.Limit, sec, l.Burst)
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

// settingWords describes cfg for strategy name in a few words.
func settingWords(name string, cfg catalog.LibConfig) string {
	var s string
	if f := family(name); f == designWindows || f == designLogs {
		s = "N"
		if cfg.Half {
			s = "N/2"
		}
	} else if name == catalog.UberRatelimit {
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

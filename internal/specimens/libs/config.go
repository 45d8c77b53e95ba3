package libs

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Config is how a library limiter is set up for each rule "N per W".
// The zero value is the setting users usually write for x/time/rate (burst
// N, rate N/W); go.uber.org/ratelimit users usually keep its default slack,
// which Default includes.
type Config struct {
	// Burst is each x/time/rate limiter's bucket size; 0 means the rule's
	// limit N.
	Burst int
	// UnitBurst is the bucket size, in units, of the limiters of the rules
	// that meter a cost (90000 tokens/1m); 0 means the rule's limit N.
	// Burst is for the call rules only.
	UnitBurst int
	// Slack is go.uber.org/ratelimit's WithSlack: how many unused
	// permissions an idle limiter banks (the library's default is 10).
	Slack int
	// Margin lengthens each window before it becomes a rate: N per W+Margin.
	Margin time.Duration
	// Half gives each rule ⌊N/2⌋ (at least 1) instead of N: what a fixed
	// window needs to keep a sliding one, since any window of width W
	// spans two fixed ones. Only the window-counting designs read it.
	Half bool
	// RoundTrip is the time between a design's two Redis round trips (the
	// check's reply and the record's arrival) on the virtual clock; only
	// the two-round-trip design reads it. On a real server it is 0: the
	// network supplies it.
	RoundTrip time.Duration
	// PerRule, when set, gives each call rule's limiter its own burst and
	// rate, by the rules' index: what a user tunes rule by rule. The
	// x/time/rate, redis_rate and throttled limiters read it; a zero field
	// keeps Burst or N.
	PerRule []RuleLimit
	// Order, when set, is the order a chain of limiters asks the rules'
	// limiters in, by the rules' index (nil: the rules' order): which
	// rule's limiter a call meets first. Only the chained designs read it.
	Order []int
}

// AskOrder returns the order the n rules' limiters are asked in: Order,
// or 0 .. n−1.
func (c Config) AskOrder(n int) []int {
	if len(c.Order) == n {
		return c.Order
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// RuleLimit is one rule's token bucket: Burst tokens, refilled Limit
// tokens per window plus Margin (0: Config.Burst or the rule's N; N).
type RuleLimit struct {
	Burst int
	Limit int
}

// RuleLimitAt returns rule i's limiter (i < 0: no rule's own): its burst and the
// tokens it earns per window plus Margin, from PerRule or the defaults.
func (c Config) RuleLimitAt(i int, r rule.Rule) RuleLimit {
	out := RuleLimit{Burst: c.BurstOf(r), Limit: r.Limit}
	if r.Unit != "" || i < 0 || i >= len(c.PerRule) {
		return out
	}
	if p := c.PerRule[i]; p.Burst > 0 {
		out.Burst = p.Burst
	}
	if p := c.PerRule[i]; p.Limit > 0 {
		out.Limit = p.Limit
	}
	return out
}

// UberDefaultSlack is go.uber.org/ratelimit's slack when none is given.
const UberDefaultSlack = 10

// DefaultRoundTrip is the two-round-trip design's gap between its trips
// on a virtual clock: a loopback round trip.
const DefaultRoundTrip = 500 * time.Microsecond

// Default is the configuration users write when they do not tune anything,
// with a loopback round trip between the two trips of that design.
func Default() Config { return Config{Slack: UberDefaultSlack, RoundTrip: DefaultRoundTrip} }

// Validate reports a setting the libraries cannot take.
func (c Config) Validate() error {
	switch {
	case c.Burst < 0 || c.UnitBurst < 0:
		return fmt.Errorf("libs: burst must not be negative")
	case c.Slack < 0:
		return fmt.Errorf("libs: slack must not be negative")
	case c.Margin < 0:
		return fmt.Errorf("libs: margin must not be negative")
	case c.RoundTrip < 0:
		return fmt.Errorf("libs: round trip must not be negative")
	}
	seen := make([]bool, len(c.Order))
	for _, i := range c.Order {
		if i < 0 || i >= len(c.Order) || seen[i] {
			return fmt.Errorf("libs: order %v is not an order of the rules' indexes", c.Order)
		}
		seen[i] = true
	}
	for _, p := range c.PerRule {
		if p.Burst < 0 || p.Limit < 0 {
			return fmt.Errorf("libs: a rule's burst and limit must not be negative")
		}
	}
	return nil
}

// BurstFor returns the bucket size for a call rule of limit n: Burst, or n.
func (c Config) BurstFor(n int) int {
	if c.Burst > 0 {
		return c.Burst
	}
	return n
}

// BurstOf returns the bucket size of r's limiter: UnitBurst (or N) for a
// rule that meters a cost, BurstFor otherwise.
func (c Config) BurstOf(r rule.Rule) int {
	if r.Unit == "" {
		return c.BurstFor(r.Limit)
	}
	if c.UnitBurst > 0 {
		return c.UnitBurst
	}
	return r.Limit
}

// LimitFor returns the limit a window-counting design enforces for a rule
// of limit n: n, or ⌊n/2⌋ (at least 1) with Half.
func (c Config) LimitFor(n int) int {
	if c.Half {
		return max(n/2, 1)
	}
	return n
}

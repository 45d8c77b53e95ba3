package libs

import (
	"context"
	"time"

	"go.uber.org/ratelimit"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// uberClock is go.uber.org/ratelimit's Clock on a runtime. The library's
// Sleep takes no context, so it cannot be cut short.
type uberClock struct{ rt clock.Runtime }

func (c uberClock) Now() time.Time { return timeAt(c.rt.Now()) }

func (c uberClock) Sleep(d time.Duration) { _ = c.rt.Sleep(context.Background(), d) }

// NewUberLimiter returns the go.uber.org/ratelimit limiter users write for
// r, ratelimit.New(N, ratelimit.Per(W+Margin), ratelimit.WithSlack(Slack)),
// running on rt.
func NewUberLimiter(rt clock.Runtime, r rule.Rule, cfg Config) ratelimit.Limiter {
	return ratelimit.New(r.Limit,
		ratelimit.Per(r.Window+cfg.Margin),
		ratelimit.WithSlack(cfg.Slack),
		ratelimit.WithClock(uberClock{rt}))
}

// Uber is one go.uber.org/ratelimit limiter per rule, taken in turn. Take
// has no context: a caller whose deadline passes while it sleeps still
// spends its permissions and is admitted late. It is safe for concurrent use
// on its runtime.
type Uber struct {
	rt    clock.Runtime
	lims  []ratelimit.Limiter
	stats *strategies.StatsKeeper
}

// NewUber returns the chained go.uber.org/ratelimit limiter for rules.
func NewUber(rt clock.Runtime, rules []rule.Rule, cfg Config) *Uber {
	u := &Uber{rt: rt, lims: make([]ratelimit.Limiter, len(rules)), stats: strategies.NewStatsKeeper(len(rules))}
	for i, r := range rules {
		u.lims[i] = NewUberLimiter(rt, r, cfg)
	}
	return u
}

// Acquire takes a permission from each rule's limiter in turn; it fails
// only when ctx has already ended on entry.
func (u *Uber) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, l := range u.lims {
		now := u.rt.Now()
		l.Take()
		u.stats.Record(i, 1)
		if d := time.Duration(u.rt.Now() - now); d > 0 {
			u.stats.Bound(i, now)
			u.stats.Wait(i, d)
		}
	}
	return nil
}

// Release does nothing: rate limiters cap rates, not concurrency.
func (u *Uber) Release() {}

// Stats returns the limiter's figures so far.
func (u *Uber) Stats() strategies.Stats { return u.stats.Stats() }

// Package throttled drives github.com/throttled/throttled/v2 (GCRA) the
// way its README shows, a GCRARateLimiterCtx per rule of a contract, asked
// in turn and retried after RetryAfter, on its in-memory store (whose clock
// can be set, so it runs on a virtual clock) or its go-redis v9 store
// (which reads the server's TIME).
package throttled

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/throttled/throttled/v2/store/memstore"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// Quota returns the quota for r, rule i of the contract: N per W+Margin,
// and a MaxBurst that lets Burst (or N) calls through at once, or the
// rule's own burst and rate where cfg.PerRule sets them; throttled's
// MaxBurst counts the calls beyond the first, so it is one less.
func Quota(i int, r rule.Rule, cfg libs.Config) throttled.RateQuota {
	l := cfg.RuleLimitAt(i, r)
	return throttled.RateQuota{MaxRate: throttled.PerDuration(l.Limit, r.Window+cfg.Margin), MaxBurst: l.Burst - 1}
}

// NewMem returns the chained limiter on memstore, its clock set to rt.
func NewMem(rt clock.Runtime, rules []rule.Rule, cfg libs.Config, epoch time.Time) (*libs.Chain, error) {
	st, err := memstore.New(65536)
	if err != nil {
		return nil, err
	}
	st.SetTimeNow(func() time.Time { return epoch.Add(time.Duration(rt.Now())) })
	return chain(rt, throttled.WrapStoreWithContext(st), rules, cfg, "")
}

// NewRedis returns the chained limiter on the go-redis v9 store, its keys
// under prefix.
func NewRedis(c redis.UniversalClient, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, prefix string) (*libs.Chain, error) {
	st, err := goredisstore.NewCtx(c, prefix)
	if err != nil {
		return nil, err
	}
	return chain(rt, st, rules, cfg, prefix)
}

// casGaveUp opens the error throttled returns when its compare-and-swap
// lost to other callers on the key too often (it has no sentinel).
const casGaveUp = "Failed to store updated rate limit data"

func chain(rt clock.Runtime, st throttled.GCRAStoreCtx, rules []rule.Rule, cfg libs.Config, prefix string) (*libs.Chain, error) {
	lims := make([]*throttled.GCRARateLimiterCtx, len(rules))
	burst := make([]int64, len(rules))
	for i, r := range rules {
		q := Quota(i, r, cfg)
		l, err := throttled.NewGCRARateLimiterCtx(st, q)
		if err != nil {
			return nil, err
		}
		lims[i], burst[i] = l, int64(q.MaxBurst+1)
	}
	// RateLimit's quantity is the call's cost in the rule's unit.
	return libs.NewCostChain(rt, rules, burst, func(ctx context.Context, i int, _ int64, n int64) (bool, time.Duration, error) {
		limited, res, err := lims[i].RateLimitCtx(ctx, strconv.Itoa(i), int(n))
		if err != nil && strings.HasPrefix(err.Error(), casGaveUp) {
			// Concurrent callers on one key (a real clock only) beat
			// this one's compare-and-swap ten times: it asks again.
			return false, 0, nil
		}
		if err != nil {
			return false, 0, err
		}
		return !limited, res.RetryAfter, nil
	}).InOrder(cfg.AskOrder(len(rules))), nil
}

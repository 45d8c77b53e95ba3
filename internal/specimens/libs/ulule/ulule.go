// Package ulule drives github.com/ulule/limiter/v3 (a fixed window that
// starts at a key's first hit and lasts W) the way its README shows, one
// limiter.Limiter per rule of a contract, asked in turn.
//
// Its Redis store decides on the server (INCRBY, then PEXPIRE on the first
// hit), so it runs on a virtual clock through internal/specimens/libs/clockredis.
// Its memory store reads time.Now directly and cannot be put on a virtual
// clock outside testing/synctest, so only the Redis store is a strategy.
package ulule

import (
	"context"
	"strconv"
	"time"

	"github.com/ulule/limiter/v3"
	sredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// Rate returns the rate users write for r: N (⌊N/2⌋ with Half) per
// W+Margin.
func Rate(r rule.Rule, cfg libs.Config) limiter.Rate {
	return limiter.Rate{Period: r.Window + cfg.Margin, Limit: int64(cfg.LimitFor(r.Limit))}
}

// New returns the chained limiter over store. A refused caller asks again
// one spacing W/N later: the library's Reset is whole Unix seconds of the
// host's clock, which says nothing on a virtual one.
func New(store limiter.Store, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key string) *libs.Chain {
	lims := make([]*limiter.Limiter, len(rules))
	retry := make([]time.Duration, len(rules))
	for i, r := range rules {
		lims[i] = limiter.New(store, Rate(r, cfg))
		retry[i] = r.Window / time.Duration(r.Limit)
	}
	return libs.NewChain(rt, len(rules), func(ctx context.Context, i int, _ int64) (bool, time.Duration, error) {
		c, err := lims[i].Get(ctx, key+":"+strconv.Itoa(i))
		if err != nil {
			return false, 0, err
		}
		return !c.Reached, retry[i], nil
	})
}

// NewRedisStore returns the library's Redis store over c, as its README
// builds it.
func NewRedisStore(c sredis.Client) (limiter.Store, error) { return sredis.NewStore(c) }

// Package redisrate drives github.com/go-redis/redis_rate/v10 (GCRA in a
// Lua script that reads the server's TIME) the way its README shows, one
// redis_rate.Limit per rule of a contract, asked in turn and retried after
// RetryAfter. The decisions are the server's: run it on a real Redis, or on
// internal/specimens/libs/clockredis to put the server on a virtual clock.
package redisrate

import (
	"context"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// Client is what redis_rate needs of a go-redis client (*redis.Client and
// *redis.ClusterClient have it).
type Client interface {
	redis.Scripter
	Del(ctx context.Context, keys ...string) *redis.IntCmd
}

// Limit returns the redis_rate.Limit users write for r, rule i of the
// contract: N per W+Margin, burst cfg.BurstOf(r) (in units for a cost
// rule), or the rule's own burst and rate where cfg.PerRule sets them.
func Limit(i int, r rule.Rule, cfg libs.Config) redis_rate.Limit {
	l := cfg.RuleLimitAt(i, r)
	return redis_rate.Limit{Rate: l.Limit, Period: r.Window + cfg.Margin, Burst: l.Burst}
}

// New returns the chained redis_rate limiter for rules on keys key:0,
// key:1, ..., asked in cfg.AskOrder; rt only sleeps (the server's clock decides). A call asks
// each limit for AllowN(ctx, key, limit, n), n its cost in the rule's unit
// (1 for a call rule), as clients of a metered API write it.
func New(rdb Client, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key string) *libs.Chain {
	l := redis_rate.NewLimiter(rdb)
	limits := make([]redis_rate.Limit, len(rules))
	keys := make([]string, len(rules))
	burst := make([]int64, len(rules))
	for i, r := range rules {
		limits[i], keys[i] = Limit(i, r, cfg), key+":"+strconv.Itoa(i)
		burst[i] = int64(limits[i].Burst)
	}
	return libs.NewCostChain(rt, rules, burst, func(ctx context.Context, i int, _ int64, n int64) (bool, time.Duration, error) {
		res, err := l.AllowN(ctx, keys[i], limits[i], int(n))
		if err != nil {
			return false, 0, err
		}
		return res.Allowed > 0, res.RetryAfter, nil
	}).InOrder(cfg.AskOrder(len(rules)))
}

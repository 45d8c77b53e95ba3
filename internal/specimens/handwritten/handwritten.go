package handwritten

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// epochNs is libs.Epoch in Unix nanoseconds: client instants are
// epochNs + rt.Now().
var epochNs = libs.Epoch.UnixNano()

// keys names one key per rule under key.
func keys(key string, n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = key + ":" + strconv.Itoa(i)
	}
	return ks
}

// NewTwoTrips checks every rule's sorted set in one round trip (ZREMRANGEBYSCORE,
// ZCARD, the oldest entry) and records in a second (ZADD, PEXPIRE): callers
// whose checks land between another's check and record all see room.
// Members are id plus a counter, scores integer microseconds of the
// caller's clock; cfg.RoundTrip is slept between the two trips.
func NewTwoTrips(c redis.Cmdable, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key, id string) *libs.Chain {
	ks := keys(key, len(rules))
	var seq atomic.Int64
	// The chain's one "rule" is the whole check-then-record step.
	try := func(ctx context.Context, _ int, now int64) (bool, time.Duration, error) {
		us := (epochNs + now) / 1000
		p := c.Pipeline()
		counts := make([]*redis.IntCmd, len(rules))
		oldest := make([]*redis.ZSliceCmd, len(rules))
		for i, r := range rules {
			w := int64(r.Window+cfg.Margin) / 1000
			p.ZRemRangeByScore(ctx, ks[i], "-inf", strconv.FormatInt(us-w, 10))
			counts[i] = p.ZCard(ctx, ks[i])
			oldest[i] = p.ZRangeWithScores(ctx, ks[i], 0, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			return false, 0, err
		}
		var wait int64
		for i, r := range rules {
			if counts[i].Val() >= int64(cfg.LimitFor(r.Limit)) {
				if z := oldest[i].Val(); len(z) > 0 {
					wait = max(wait, int64(z[0].Score)+int64(r.Window+cfg.Margin)/1000-us)
				}
			}
		}
		if wait > 0 {
			return false, time.Duration(wait) * time.Microsecond, nil
		}
		if cfg.RoundTrip > 0 {
			if err := rt.Sleep(context.WithoutCancel(ctx), cfg.RoundTrip); err != nil {
				return false, 0, err
			}
		}
		member := id + ":" + strconv.FormatInt(seq.Add(1), 10)
		p = c.Pipeline()
		for i, r := range rules {
			p.ZAdd(ctx, ks[i], redis.Z{Score: float64(us), Member: member})
			p.PExpire(ctx, ks[i], r.Window+cfg.Margin)
		}
		_, err := p.Exec(ctx)
		return err == nil, 0, err
	}
	return libs.NewAtomic(rt, len(rules), try)
}

// tsMember is one atomic script over every rule that checks all, then
// records all, with the timestamp in milliseconds as the member: two calls
// in the same millisecond write one entry.
var tsMember = redis.NewScript(`
local now = tonumber(ARGV[1])
local wait = 0
for i = 1, #KEYS do
  local limit, window = tonumber(ARGV[i*2]), tonumber(ARGV[i*2+1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  if redis.call('ZCARD', KEYS[i]) >= limit then
    local oldest = tonumber(redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')[2])
    wait = math.max(wait, oldest + window - now)
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, now)
  redis.call('PEXPIRE', KEYS[i], ARGV[i*2+1])
end
return 0
`)

// NewTimestampMember returns the atomic script limiter whose member is the
// millisecond timestamp.
func NewTimestampMember(c redis.Scripter, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key string) *libs.Chain {
	ks := keys(key, len(rules))
	return libs.NewAtomic(rt, len(rules), func(ctx context.Context, _ int, now int64) (bool, time.Duration, error) {
		args := []any{(epochNs + now) / int64(time.Millisecond)}
		for _, r := range rules {
			args = append(args, cfg.LimitFor(r.Limit), (r.Window + cfg.Margin).Milliseconds())
		}
		wait, err := tsMember.Run(ctx, c, ks, args...).Int64()
		if err != nil {
			return false, 0, err
		}
		return wait <= 0, time.Duration(wait) * time.Millisecond, nil
	})
}

// NewFixedWindow returns fixed windows counted with INCR and EXPIRE, one
// per rule, taken in turn: the key is the window's number
// ⌊t/(W+Margin)⌋, EXPIRE its length in whole seconds rounded up, a refused
// caller waits for the next window, and its INCR still counts.
func NewFixedWindow(c redis.Cmdable, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key string) *libs.Chain {
	ks := keys(key, len(rules))
	return libs.NewChain(rt, len(rules), func(ctx context.Context, i int, now int64) (bool, time.Duration, error) {
		r := rules[i]
		w := int64(r.Window + cfg.Margin)
		t := epochNs + now
		k := fmt.Sprintf("%s:%d", ks[i], t/w)
		n, err := c.Incr(ctx, k).Result()
		if err != nil {
			return false, 0, err
		}
		if n == 1 {
			// EXPIRE takes whole seconds: round up, so a key outlives its
			// window (go-redis would truncate, and log below 1 s).
			if err := c.Expire(ctx, k, time.Duration((w+int64(time.Second)-1)/int64(time.Second))*time.Second).Err(); err != nil {
				return false, 0, err
			}
		}
		return n <= int64(cfg.LimitFor(r.Limit)), time.Duration((t/w+1)*w - t), nil
	})
}

// guide is the multi-window script of the guide, as it is written there:
// float seconds, the first full rule's wait, EXPIRE in whole seconds.
var guide = redis.NewScript(`
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local limit, window = tonumber(ARGV[i*2]), tonumber(ARGV[i*2+1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  if redis.call('ZCARD', KEYS[i]) >= limit then
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')[2]
    return tostring(tonumber(oldest) + window - now)          -- wait required
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[#ARGV])
  redis.call('EXPIRE', KEYS[i], math.ceil(tonumber(ARGV[i*2+1])))
end
return '0'
`)

// NewGuideScript returns the guide's acquire_global loop: time.time() as
// float seconds, a unique member per call, and a sleep of the wait the
// script returns.
func NewGuideScript(c redis.Scripter, rt clock.Runtime, rules []rule.Rule, cfg libs.Config, key, id string) *libs.Chain {
	ks := keys(key, len(rules))
	var seq atomic.Int64
	return libs.NewAtomic(rt, len(rules), func(ctx context.Context, _ int, now int64) (bool, time.Duration, error) {
		args := []any{float64(epochNs+now) / 1e9}
		for _, r := range rules {
			args = append(args, cfg.LimitFor(r.Limit), (r.Window + cfg.Margin).Seconds())
		}
		args = append(args, id+":"+strconv.FormatInt(seq.Add(1), 10))
		s, err := guide.Run(ctx, c, ks, args...).Text()
		if err != nil {
			return false, 0, err
		}
		wait, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false, 0, err
		}
		return wait <= 0, time.Duration(wait * 1e9), nil
	})
}

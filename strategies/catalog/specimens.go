package catalog

import (
	"fmt"

	"github.com/rlcheck/rlcheck/internal/specimens/handwritten"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/clockredis"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/redisrate"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/throttled"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/ulule"
	"github.com/rlcheck/rlcheck/internal/specimens/postcall"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// Names of the library-backed strategies and of the hand-written Redis
// designs.
const (
	XRateChained    = "xrate-chained"
	XRateReserveAll = "xrate-reserve-all"
	UberRatelimit   = "uber-ratelimit"
	RedisRate       = "redis-rate"
	ThrottledMem    = "throttled-mem"
	ThrottledRedis  = "throttled-redis"
	UluleRedis      = "ulule-redis"
	TwoTrips        = "redis-two-trips"
	TimestampMember = "redis-ts-member"
	FixedWindow     = "redis-fixed-window"
	GuideScript     = "redis-guide-script"
	RedisClientTime = "redis-client-time"
	// PostCall is the gateways' post-call limiter (internal/specimens/postcall).
	PostCall = "post-call"
)

// LibStrategyNames lists the library-backed strategies and the
// hand-written Redis designs, in table order.
func LibStrategyNames() []string {
	return []string{XRateChained, XRateReserveAll, UberRatelimit, RedisRate, ThrottledMem, ThrottledRedis,
		UluleRedis, TwoTrips, TimestampMember, FixedWindow, GuideScript}
}

// AuditStrategyNames lists what `rlcheck audit` audits by default: the
// library strategies, the hand-written designs and redis-client-time.
func AuditStrategyNames() []string { return append(LibStrategyNames(), RedisClientTime) }

// LibCosts reports whether the library strategy name meters costs: the
// libraries that take a quantity (x/time/rate's WaitN, redis_rate's
// AllowN, throttled's RateLimit) and the project's script on the hosts'
// clocks.
func LibCosts(name string) bool {
	switch name {
	case XRateChained, RedisRate, ThrottledMem, ThrottledRedis, RedisClientTime:
		return true
	}
	return false
}

// libStrategies are the table entries for the libraries as users configure
// them by default.
func libStrategies() []Strategy {
	out := make([]Strategy, 0, len(LibStrategyNames()))
	for _, name := range LibStrategyNames() {
		st, _ := LibStrategy(name, libs.Default())
		out = append(out, st)
	}
	return out
}

// postCall is the table entry of the post-call limiter: a specimen that
// charges a call's actual costs only when its answer reports them.
func postCall() Strategy {
	return Strategy{
		Name: PostCall, Doc: "admit while every window has room, charge the actual costs when the answer reports them: the gateways' post-call pattern, which overfills",
		Costs: true, Settles: true,
		New: func(e Env) (strategies.Limiter, error) { return postcall.New(e.Runtime, e.Rules...), nil },
	}
}

// LibConfig is how the audited libraries are set up: a burst, a slack, a
// margin on each window, half limits for window-counting designs. It names
// the specimens' own type, which lives under internal/ with them, so that
// callers of LibStrategy and audit can build one.
type LibConfig = libs.Config

// LibStrategy returns the library-backed strategy name with cfg, so callers
// such as `rlcheck audit` can run tuned settings through RunStrategy. The
// Redis-backed ones run on an in-process Redis of their own whose clock is
// the run's virtual clock (clockredis), whatever Options.Redis says: their
// decisions read the server's clock. redis-client-time takes cfg.Margin.
func LibStrategy(name string, cfg LibConfig) (Strategy, bool) {
	if name == RedisClientTime {
		return Strategy{
			Name: name, Doc: "the redis script on each worker's own (possibly skewed) clock",
			PerWorker: true, NeedsRedis: true, Costs: true,
			New: func(e Env) (strategies.Limiter, error) {
				e.Rules = strategies.Widen(cfg.Margin, e.Rules...)
				return newRedis(e, redislimit.Client, false)
			},
		}, true
	}
	doc, mk, ok := memorySpecimen(name, cfg)
	costly := false
	if !ok {
		var chain func(Env, *clockredis.Server) (*libs.Chain, error)
		if doc, chain, ok = redisSpecimen(name, cfg); !ok {
			return Strategy{}, false
		}
		mk, costly = onOwnRedis(chain), true
	}
	return Strategy{Name: name, Doc: doc, Costly: costly, Costs: LibCosts(name), New: func(e Env) (strategies.Limiter, error) {
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		lim, err := mk(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return lim, nil
	}}, true
}

// memorySpecimen returns the in-process library strategy name.
func memorySpecimen(name string, cfg libs.Config) (doc string, mk func(Env) (strategies.Limiter, error), ok bool) {
	switch name {
	case XRateChained:
		return "golang.org/x/time/rate, one limiter per rule, waited on in turn",
			func(e Env) (strategies.Limiter, error) { return libs.NewXRateChained(e.Runtime, e.Rules, cfg), nil }, true
	case XRateReserveAll:
		return "golang.org/x/time/rate, reserve on every limiter, sleep the longest delay",
			func(e Env) (strategies.Limiter, error) { return libs.NewXRateReserveAll(e.Runtime, e.Rules, cfg), nil }, true
	case UberRatelimit:
		return "go.uber.org/ratelimit, one limiter per rule, taken in turn",
			func(e Env) (strategies.Limiter, error) { return libs.NewUber(e.Runtime, e.Rules, cfg), nil }, true
	case ThrottledMem:
		return "github.com/throttled/throttled/v2 (GCRA), memstore, one quota per rule, asked in turn",
			func(e Env) (strategies.Limiter, error) { return throttled.NewMem(e.Runtime, e.Rules, cfg, libs.Epoch) }, true
	}
	return "", nil, false
}

// redisSpecimen returns the Redis-backed library or hand-written design
// name, as the chain it builds on a server of its own.
func redisSpecimen(name string, cfg libs.Config) (doc string, chain func(Env, *clockredis.Server) (*libs.Chain, error), ok bool) {
	switch name {
	case RedisRate:
		return "github.com/go-redis/redis_rate/v10 (GCRA, server TIME), one limit per rule, asked in turn",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return redisrate.New(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key), nil
			}, true
	case ThrottledRedis:
		return "github.com/throttled/throttled/v2 (GCRA), go-redis v9 store (server TIME), one quota per rule",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return throttled.NewRedis(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key+":")
			}, true
	case UluleRedis:
		return "github.com/ulule/limiter/v3, Redis store: a fixed window from the first hit, one per rule",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				st, err := ulule.NewRedisStore(s.Client)
				if err != nil {
					return nil, err
				}
				return ulule.New(st, e.Runtime, e.Rules, cfg, e.Shared.Key), nil
			}, true
	case TwoTrips:
		return "hand-written: check (ZCARD) in one round trip, record (ZADD) in a second",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return handwritten.NewTwoTrips(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key, "c"), nil
			}, true
	case TimestampMember:
		return "hand-written: one atomic script, the millisecond timestamp as the member",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return handwritten.NewTimestampMember(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key), nil
			}, true
	case FixedWindow:
		return "hand-written: fixed windows with INCR and EXPIRE, one per rule",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return handwritten.NewFixedWindow(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key), nil
			}, true
	case GuideScript:
		return "the guide's multi-window script as written: float seconds, the first wait found",
			func(e Env, s *clockredis.Server) (*libs.Chain, error) {
				return handwritten.NewGuideScript(s.Client, e.Runtime, e.Rules, cfg, e.Shared.Key, "c"), nil
			}, true
	}
	return "", nil, false
}

// onOwnRedis builds a limiter with chain on an in-process Redis of its
// own, whose clock is the run's (unskewed) clock.
func onOwnRedis(chain func(Env, *clockredis.Server) (*libs.Chain, error)) func(Env) (strategies.Limiter, error) {
	return func(e Env) (strategies.Limiter, error) {
		s, err := clockredis.Start(e.Shared.Now)
		if err != nil {
			return nil, err
		}
		lim, err := chain(e, s)
		if err != nil {
			s.Close()
			return nil, err
		}
		return ownRedis{lim, s}, nil
	}
}

// ownRedis is a library limiter with the embedded server it runs on, which
// the run closes when it is over (CloseLimiters).
type ownRedis struct {
	*libs.Chain
	s *clockredis.Server
}

func (o ownRedis) Close() error { return o.s.Close() }

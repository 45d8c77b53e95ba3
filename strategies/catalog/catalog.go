package catalog

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/workload"
)

// Env is what a strategy factory gets for one worker of one run.
type Env struct {
	// Runtime is the worker's view of the virtual clock (its skew applied).
	Runtime     clock.Runtime
	Rules       []rule.Rule
	MaxInFlight int
	Worker      int // 0-based
	Workers     int
	Shared      *Shared
}

// LimiterEnv is the Env of worker w's limiter of s, on runtime rt: the rules
// widened by the margin, the slots and the workers. The simulator and the
// real-clock runner both build their limiters from it, so that a
// prediction runs the limiters a real run runs.
func LimiterEnv(s *workload.Scenario, w int, rt clock.Runtime, shared *Shared) Env {
	return Env{Runtime: rt, Rules: strategies.Widen(s.Margin, s.Rules...), MaxInFlight: s.MaxInFlight,
		Worker: w, Workers: s.Workers, Shared: shared}
}

// Shared is per-run state every worker of a strategy sees.
type Shared struct {
	// Key is unique to the run (scenario, strategy, seed), so that state
	// kept outside the process, such as Redis keys, never mixes runs.
	Key string
	// Redis is the store a distributed strategy talks to (chosen by the
	// caller of Run: in-process miniredis, a server, a cluster); nil when
	// none was given.
	Redis redis.Scripter
	// Now is the run's unskewed virtual clock, which a shared server's
	// clock stands for.
	Now func() int64
	// InProcess marks Redis as the embedded server a run on virtual time
	// started itself, whose clock the wall clock does not move.
	InProcess bool
	rtt       *rttPath // the Redis round trip, nil when none
}

// SimulateRTT puts a Redis round trip drawn from rtt with rng on every
// script call of the run's redis strategies, on the virtual clock of sch:
// the script runs when the request leg (half the round trip) arrives, and
// the caller resumes after the reply leg, marked (sch.Mark) with the
// instant its script ran.
func (sh *Shared) SimulateRTT(sch *virtual.Sched, rtt workload.Dist, rng *rand.Rand) {
	sh.rtt = &rttPath{sch: sch, rtt: rtt, rng: rng}
}

// Strategy is one entry of the strategy table.
type Strategy struct {
	Name string
	Doc  string
	// PerWorker strategies get one limiter per worker (each with that
	// worker's Env); the others one limiter shared by all workers, built
	// with worker 0's Env, as if the workers were one process.
	PerWorker bool
	// CheckAll marks designs that must never violate nor leak capacity
	// (the conformance suite holds them to it).
	CheckAll bool
	// NeedsSlots strategies use max_in_flight and must never exceed it.
	NeedsSlots bool
	// NeedsRedis strategies get an in-process miniredis when Options.Redis
	// is nil.
	NeedsRedis bool
	// Costly strategies run every try as a command, most often a Lua
	// script, on an embedded Redis of their own (clockredis): a seed costs
	// 10 to 100 times an in-memory one, so commands that run many seeds
	// default to fewer of them.
	Costly bool
	// Costs marks strategies that meter costs: their limiters are
	// strategies.CostLimiters. The others refuse rules with a unit.
	Costs bool
	// Kinds marks strategies that keep rules of the kinds other than
	// sliding (fixed, bucket, first-call) as the provider counts them: the
	// in-memory ones every kind, the Redis ones those the script keeps
	// (redislimit.CheckKind). The others refuse rules of a kind other than
	// sliding.
	Kinds bool
	// Settles marks strategies whose limiters (strategies.Reservers) the
	// runners drive by Reserve at the call's estimates and Settle at its
	// end with its actual costs. The others acquire at the estimates and
	// never learn the actual costs; the provider settles every call all
	// the same (workload.Scenario.Actual).
	Settles bool
	New     func(Env) (strategies.Limiter, error)
}

// strategyTable lists the strategies by name; a distributed strategy is one more
// entry whose New builds its client from Env.Shared.
var strategyTable = append([]Strategy{
	{
		Name: "sequential", Kinds: true, Doc: "one sliding log per rule, acquired in turn",
		Costs: true,
		New:   func(e Env) (strategies.Limiter, error) { return strategies.NewSequential(e.Runtime, e.Rules...), nil },
	},
	{
		Name: "combined", Kinds: true, Doc: "check every rule, sleep the longest wait, record once, under a FIFO lock",
		Costs:    true,
		CheckAll: true,
		New:      func(e Env) (strategies.Limiter, error) { return strategies.NewCombined(e.Runtime, e.Rules...), nil },
	},
	{
		Name: "gated", Kinds: true, Doc: "a concurrency slot for the whole call, then combined",
		Costs:    true,
		CheckAll: true, NeedsSlots: true,
		New: func(e Env) (strategies.Limiter, error) {
			return strategies.NewGated(e.Runtime, e.MaxInFlight, e.Rules...), nil
		},
	},
	{
		Name: "gated-rates-first", Kinds: true, Doc: "combined rates first, then the slot: the wrong order",
		Costs:      true,
		NeedsSlots: true,
		New: func(e Env) (strategies.Limiter, error) {
			return strategies.NewGatedRatesFirst(e.Runtime, e.MaxInFlight, e.Rules...), nil
		},
	},
	{
		Name: "local-per-worker", Kinds: true, Doc: "a combined limiter in each worker for a key the workers share",
		Costs:     true,
		PerWorker: true,
		New:       func(e Env) (strategies.Limiter, error) { return strategies.NewCombined(e.Runtime, e.Rules...), nil },
	},
	{
		Name: "combined-counter", Kinds: true, Doc: "combined over sliding-window counters, an approximation",
		Costs: true,
		New: func(e Env) (strategies.Limiter, error) {
			return strategies.NewCombinedCounter(e.Runtime, e.Rules...), nil
		},
	},
	{
		Name: "combined-sliding", Kinds: true, Doc: "combined keeping every rule as a sliding window of its N/W, whatever kind the provider counts: a limiter that does not know the kind",
		Costs: true, // not CheckAll: against a bucket it breaks the provider's rule by design
		New: func(e Env) (strategies.Limiter, error) {
			return strategies.NewCombined(e.Runtime, AsSliding(e.Rules)...), nil
		},
	},
	{
		Name: "redis", Kinds: true, Doc: "one atomic check-and-record script in Redis per call, shared by every worker, on the server's clock; exact logs for small limits, bucketed windows for large ones",
		PerWorker: true, CheckAll: true, NeedsRedis: true, Costs: true,
		New: func(e Env) (strategies.Limiter, error) { return newRedis(e, redislimit.Virtual, false) },
	},
	{
		Name: "redis-client-time", Kinds: true, Doc: "the redis script on each worker's own (possibly skewed) clock",
		PerWorker: true, NeedsRedis: true, Costs: true,
		New: func(e Env) (strategies.Limiter, error) { return newRedis(e, redislimit.Client, false) },
	},
	{
		Name: "combined-bucketed", Kinds: true, Doc: "combined under the default bookkeeping: exact logs for small limits, bucketed windows for large ones",
		Costs:    true,
		CheckAll: true,
		New: func(e Env) (strategies.Limiter, error) {
			return strategies.NewCombinedBounded(e.Runtime, e.Rules...), nil
		},
	},
	{
		Name: "redis-bucketed", Kinds: true, Doc: "the redis script under the default bookkeeping, as combined-bucketed (the same as redis)",
		PerWorker: true, CheckAll: true, NeedsRedis: true, Costs: true,
		New: func(e Env) (strategies.Limiter, error) {
			e.Rules = rule.Resolve(e.Rules)
			return newRedis(e, redislimit.Virtual, false)
		},
	},
	{
		Name: "reserve", Kinds: true, Doc: "combined, reserving each call's estimated costs at admission and settling them to the actual ones when its answer reports them",
		Costs: true, CheckAll: true, Settles: true,
		New: func(e Env) (strategies.Limiter, error) { return strategies.NewCombined(e.Runtime, e.Rules...), nil },
	},
	{
		Name: "redis-reserve", Kinds: true, Doc: "the redis script reserving each call's estimates and settling them to its actual costs in a second run of it",
		PerWorker: true, CheckAll: true, NeedsRedis: true, Costs: true, Settles: true,
		New: func(e Env) (strategies.Limiter, error) { return newRedis(e, redislimit.Virtual, false) },
	},
	{
		Name: "redis-exact", Kinds: true, Doc: "the redis script with every rule an exact sorted set, whatever its limit",
		PerWorker: true, CheckAll: true, NeedsRedis: true, Costs: true,
		New: func(e Env) (strategies.Limiter, error) { return newRedis(e, redislimit.Virtual, true) },
	},
}, append(libStrategies(), postCall())...)

// StrategyNames names every strategy of the table, in its order.
func StrategyNames() []string {
	names := make([]string, len(strategyTable))
	for i, st := range strategyTable {
		names[i] = st.Name
	}
	return names
}

// Strategies returns the strategy table, in its fixed order.
func Strategies() []Strategy { return append([]Strategy(nil), strategyTable...) }

// Lookup finds a strategy by name.
func Lookup(name string) (Strategy, bool) {
	for _, s := range strategyTable {
		if s.Name == name {
			return s, true
		}
	}
	return Strategy{}, false
}

// Validate reports the first inconsistency in s, an unknown strategy or
// one it cannot run among them.
func Validate(s *workload.Scenario) error {
	return s.ValidateWith(func(name string) error {
		st, ok := Lookup(name)
		if !ok {
			return fmt.Errorf("unknown strategy %q (known: %s)", name, strategyNames())
		}
		if st.NeedsSlots && s.MaxInFlight < 1 {
			return fmt.Errorf("strategy %s needs max_in_flight", name)
		}
		if len(s.Costs) > 0 && !st.Costs {
			return fmt.Errorf("strategy %s meters calls only so far: it cannot run rules that meter %s", name, strings.Join(s.Units(), ", "))
		}
		for _, r := range s.Rules {
			if r.Kind != rule.Sliding && !st.Kinds {
				return fmt.Errorf("strategy %s keeps sliding rules only so far: it cannot run rule %s (strategies that keep every kind: %s)", name, r, kindStrategies())
			}
			if st.NeedsRedis && st.Kinds {
				if err := redislimit.CheckKind(strategies.Widen(s.Margin, r)[0]); err != nil {
					return fmt.Errorf("strategy %s: %w", name, err)
				}
			}
		}
		return nil
	})
}

// AsSliding returns rules with every kind read as the sliding rule of
// the same limit, unit and window, and every margin added to the window:
// what a limiter that knows only sliding windows keeps.
func AsSliding(rules []rule.Rule) []rule.Rule {
	out := make([]rule.Rule, len(rules))
	for i, r := range rules {
		out[i] = strategies.Widen(r.Margin, rule.Rule{Limit: r.Limit, Window: r.Window, Unit: r.Unit, Buckets: r.Buckets})[0]
	}
	return out
}

// kindStrategies names the strategies that keep every kind, for messages.
func kindStrategies() string {
	var names []string
	for _, s := range strategyTable {
		if s.Kinds {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ", ")
}

// Known returns every strategy name, sorted and comma-separated, for
// messages.
func Known() string { return strategyNames() }

func strategyNames() string {
	names := make([]string, len(strategyTable))
	for i, s := range strategyTable {
		names[i] = s.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

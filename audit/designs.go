package audit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// design is one limiter under study, registered once: the audit asks it
// how to build itself with a setting, its analytic worst case, whether it
// meters costs and which setting a search may turn, and never asks for its
// name but to print it.
type design interface {
	Name() string
	// Construct returns the design with setting cfg, ready to run.
	Construct(cfg catalog.LibConfig) (runner, error)
	// Model is its analysis with cfg under opt (without curves, why is
	// why it has no analytic worst case).
	Model(cfg catalog.LibConfig, opt *Options) analysis
	// NoCosts says why it is left out of the audit of a weighted contract
	// ("" when it meters costs).
	NoCosts() string
	// CallsOnly says why it is left out of the audit of a contract of
	// calls only ("" when it is audited there).
	CallsOnly() string
	// Tuning is the setting a search for a safe one may turn.
	Tuning() tuning
	// Code is the code a user writes for rule i with cfg.
	Code(cfg catalog.LibConfig, i int, r rule.Rule) string
	// Validate says whether it can run scenario sc.
	Validate(sc *workload.Scenario) error
}

// runner runs a scenario on one seed.
type runner func(sc *workload.Scenario, seed uint64) (simulate.StrategyResult, error)

// tuning is what a design's safe setting may turn.
type tuning struct {
	// family is the kind of design (designBuckets, ...): the knob a safe
	// setting turns; "" when nothing may be turned.
	family string
	// perRule: each rule's limiter takes its own burst and rate
	// (Config.PerRule), so the search tunes them rule by rule.
	perRule bool
	// noSetting says why no setting keeps a sliding rule, for designs
	// where the search is expected to find none.
	noSetting string
	// marginFirst: a margin of 0 never holds, so the search starts above.
	marginFirst bool
}

// goDesign is a Go strategy of the catalog: its model is the delay model
// every Go design shares (send and step slack) adjusted by adjust, with a
// limiter per rule of the curve mk builds.
type goDesign struct {
	name    string
	tune    tuning
	noCosts string
	// adjust sets a's flags and slack for the design and returns the
	// curve of one limiter, or nil with a.why set.
	adjust func(a *analysis, cfg catalog.LibConfig) limiterCurve
	code   func(cfg catalog.LibConfig, i int, r rule.Rule) string
}

// limiterCurve builds one limiter's curve from its burst and limit per
// window.
type limiterCurve func(burst, limit int64, per time.Duration) curve

func (g *goDesign) Name() string      { return g.name }
func (g *goDesign) NoCosts() string   { return g.noCosts }
func (g *goDesign) CallsOnly() string { return "" }
func (g *goDesign) Tuning() tuning    { return g.tune }

func (g *goDesign) Construct(cfg catalog.LibConfig) (runner, error) {
	st, ok := catalog.LibStrategy(g.name, cfg)
	if !ok {
		return nil, fmt.Errorf("audit: %q is not a library strategy", g.name)
	}
	return strategyRunner(st), nil
}

// strategyRunner runs the Go strategy st.
func strategyRunner(st catalog.Strategy) runner {
	return func(sc *workload.Scenario, seed uint64) (simulate.StrategyResult, error) {
		return simulate.RunStrategy(sc, st, seed, simulate.Options{})
	}
}

func (g *goDesign) Model(cfg catalog.LibConfig, opt *Options) analysis {
	if sendDelay(opt) < 0 {
		return analysis{why: "lateness or op cost unbounded"}
	}
	// One model of delay for every design: a send lags the decision that
	// admitted it by the op costs of the steps after it and a scheduling
	// delay as long as the latest wake-up (a sleep to a reserved instant,
	// or a reply handled late), and a refused caller's retry as much.
	d := sendDelay(opt)
	a := analysis{chained: true, passes: true, send: d, step: d}
	mk := g.adjust(&a, cfg)
	if mk == nil {
		return a
	}
	a.curves = curves(g, cfg, opt.Rules, mk)
	if a.chained && !a.passes {
		a.windows = windowChain(g, cfg, opt.Rules, &a)
	}
	return a
}

func (g *goDesign) Code(cfg catalog.LibConfig, i int, r rule.Rule) string { return g.code(cfg, i, r) }

func (g *goDesign) Validate(sc *workload.Scenario) error { return catalog.Validate(sc) }

// Kinds of design, by the knob a safe setting turns.
const (
	designBuckets = "buckets" // token buckets and GCRA: burst, then margin
	designSlack   = "slack"   // go.uber.org/ratelimit: slack, then margin
	designWindows = "windows" // fixed windows: margin, then half the limit
	designLogs    = "logs"    // sliding logs in Redis: margin only
	designExec    = "exec"    // an adapter program: the margin its runs carry
)

// Why the search finds no setting for some designs, and why some meter no
// costs.
const (
	halfOnly      = "with the full N, N calls before a window's end and N after it fit in a moment; only N/2 per window can hold"
	countsCalls   = "counts calls (a member or an INCR a call): no cost in the design"
	twoTripsGap   = "callers that check between another's check and record all see room; no limit or margin closes that gap"
	sameMillisec  = "calls in the same millisecond write one member, so the set undercounts whatever the limit or margin"
	floatTimeGrid = 239 * time.Nanosecond // float Unix seconds of 2026: a 2⁻²² s grid
)

// goDesigns are the Go designs audit knows, in table order.
func goDesigns() []design {
	bucket := func(b, n int64, per time.Duration) curve {
		return func(t time.Duration) int64 { return bucketWorst(b, n, per, t) }
	}
	fixed := func(_, n int64, per time.Duration) curve {
		return func(t time.Duration) int64 { return fixedWorst(n, per, t) }
	}
	logs := func(_, n int64, per time.Duration) curve {
		return func(t time.Duration) int64 { return logWorst(n, per, t) }
	}
	xrate := func(chained bool) func(*analysis, catalog.LibConfig) limiterCurve {
		return func(a *analysis, _ catalog.LibConfig) limiterCurve {
			a.chained = chained
			a.send++ // x/time/rate converts tokens to durations in floats
			return bucket
		}
	}
	serverTime := func(mk limiterCurve) func(*analysis, catalog.LibConfig) limiterCurve {
		return func(a *analysis, _ catalog.LibConfig) limiterCurve {
			a.send += time.Microsecond // server TIME
			a.step += time.Microsecond
			return mk
		}
	}
	window := func(extra time.Duration, firstHit bool) func(*analysis, catalog.LibConfig) limiterCurve {
		return func(a *analysis, _ catalog.LibConfig) limiterCurve {
			a.passes, a.firstHit = false, firstHit
			a.send += extra
			return fixed
		}
	}
	log := func(extra time.Duration) func(*analysis, catalog.LibConfig) limiterCurve {
		return func(a *analysis, _ catalog.LibConfig) limiterCurve {
			a.chained, a.logs = false, true
			a.send += extra
			return logs
		}
	}
	none := func(why string) func(*analysis, catalog.LibConfig) limiterCurve {
		return func(a *analysis, _ catalog.LibConfig) limiterCurve {
			*a = analysis{why: why}
			return nil
		}
	}
	windows, logsTune := tuning{family: designWindows, noSetting: halfOnly}, tuning{family: designLogs}
	perRule := tuning{family: designBuckets, perRule: true}
	return []design{
		&goDesign{name: catalog.XRateChained, tune: perRule, adjust: xrate(true), code: xrateCode},
		&goDesign{name: catalog.XRateReserveAll, tune: perRule, adjust: xrate(false), code: xrateCode,
			noCosts: "reserves 1 on every limiter (the pattern audited: ReserveN with a cost is not wired)"},
		&goDesign{name: catalog.UberRatelimit, tune: tuning{family: designSlack}, adjust: uberModel, code: uberCode,
			noCosts: "Take() takes no quantity: one permission a call"},
		&goDesign{name: catalog.RedisRate, tune: perRule, adjust: serverTime(bucket), code: redisRateCode},
		&goDesign{name: catalog.ThrottledMem, tune: perRule, code: throttledCode,
			adjust: func(*analysis, catalog.LibConfig) limiterCurve { return truncated(bucket) }},
		&goDesign{name: catalog.ThrottledRedis, tune: perRule, adjust: serverTime(truncated(bucket)), code: throttledCode},
		&goDesign{name: catalog.UluleRedis, tune: windows, adjust: window(time.Millisecond, true), code: ululeCode, // PEXPIRE
			noCosts: "Increment(ctx, key, count) takes one, but is not wired: chained fixed windows have no safe setting in any unit"},
		&goDesign{name: catalog.TwoTrips, tune: tuning{family: designLogs, noSetting: twoTripsGap}, adjust: none(twoTripsGap),
			code: perWindowCode, noCosts: countsCalls},
		&goDesign{name: catalog.TimestampMember, tune: tuning{family: designLogs, noSetting: sameMillisec}, adjust: none(sameMillisec),
			code: perWindowCode, noCosts: countsCalls},
		&goDesign{name: catalog.FixedWindow, tune: windows, adjust: window(0, false), code: incrCode, noCosts: countsCalls},
		// Float Unix seconds lie on a 238 ns grid in 2026: a call less
		// than one step short of W after an entry can see it expired, so
		// without a margin it cannot hold (TestGuideScriptFloatSeconds).
		&goDesign{name: catalog.GuideScript, tune: tuning{family: designLogs, marginFirst: true}, adjust: log(floatTimeGrid),
			code: perWindowCode, noCosts: countsCalls},
		&goDesign{name: catalog.RedisClientTime, tune: logsTune, code: perWindowCode,
			adjust: log(time.Microsecond + skewSpread(concurrentSkew))}, // µs scores, each worker's clock
	}
}

// uberModel: an idle go.uber.org/ratelimit limiter banks slack spacings;
// the spacing is per/N in integer nanoseconds, truncated, with no float.
func uberModel(_ *analysis, cfg catalog.LibConfig) limiterCurve {
	return func(_, n int64, per time.Duration) curve {
		per = time.Duration(n) * (per / time.Duration(n))
		return func(t time.Duration) int64 { return bucketWorst(int64(cfg.Slack)+1, n, per, t) }
	}
}

// allDesigns are the designs audit knows, in table order: the Go designs,
// then those of costs known only after the call.
func allDesigns() []design { return append(goDesigns(), settleDesigns()...) }

// designNames names allDesigns, for messages.
func designNames() []string {
	var out []string
	for _, d := range allDesigns() {
		out = append(out, d.Name())
	}
	return out
}

// lookupDesign returns the design name.
func lookupDesign(name string) (design, bool) {
	for _, d := range allDesigns() {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}

// designsOf returns the designs opt audits: the Go designs it names (all
// when it names none), then every strategy of its adapter program.
func designsOf(opt *Options) ([]design, error) {
	var out []design
	if opt.Strategies == nil && opt.Exec == nil {
		out = allDesigns()
	}
	for _, name := range opt.Strategies {
		d, ok := lookupDesign(name)
		if !ok {
			return nil, fmt.Errorf("audit: %q is not a library strategy (known: %v)", name, designNames())
		}
		out = append(out, d)
	}
	if opt.Exec != nil {
		for _, name := range opt.Exec.Strategies() {
			if _, ok := lookupDesign(name); ok {
				return nil, fmt.Errorf("audit: adapter %q offers strategy %q, the name of a Go design", opt.Exec.Command(), name)
			}
			out = append(out, &execDesign{prog: opt.Exec, name: name})
		}
	}
	return out, nil
}

func redisRateCode(cfg catalog.LibConfig, i int, r rule.Rule) string {
	l := cfg.RuleLimitAt(i, r)
	return fmt.Sprintf("redis_rate.Limit{Rate: %d, Period: %s, Burst: %d}", l.Limit, goDuration(r.Window+cfg.Margin), l.Burst)
}

func throttledCode(cfg catalog.LibConfig, i int, r rule.Rule) string {
	l := cfg.RuleLimitAt(i, r)
	return fmt.Sprintf("throttled.RateQuota{MaxRate: throttled.PerDuration(%d, %s), MaxBurst: %d}", l.Limit, goDuration(r.Window+cfg.Margin), l.Burst-1)
}

func ululeCode(cfg catalog.LibConfig, _ int, r rule.Rule) string {
	return fmt.Sprintf("limiter.Rate{Period: %s, Limit: %d}", goDuration(r.Window+cfg.Margin), cfg.LimitFor(r.Limit))
}

func incrCode(cfg catalog.LibConfig, _ int, r rule.Rule) string {
	return fmt.Sprintf("INCR ⌊t/%s⌋, at most %d", goDuration(r.Window+cfg.Margin), cfg.LimitFor(r.Limit))
}

func perWindowCode(cfg catalog.LibConfig, _ int, r rule.Rule) string {
	return fmt.Sprintf("%d per %s", cfg.LimitFor(r.Limit), goDuration(r.Window+cfg.Margin))
}

func uberCode(cfg catalog.LibConfig, _ int, r rule.Rule) string {
	slack := fmt.Sprintf("ratelimit.WithSlack(%d)", cfg.Slack)
	if cfg.Slack == 0 {
		slack = "ratelimit.WithoutSlack"
	}
	return fmt.Sprintf("ratelimit.New(%d, ratelimit.Per(%s), %s)", r.Limit, goDuration(r.Window+cfg.Margin), slack)
}

// xrateCode is x/time/rate's constructor; its limit and burst are the
// rule's own where the setting gives each rule its own (PerRule).
func xrateCode(cfg catalog.LibConfig, i int, r rule.Rule) string {
	l := cfg.RuleLimitAt(i, r)
	sec := strconv.FormatFloat((r.Window + cfg.Margin).Seconds(), 'f', -1, 64)
	if !strings.Contains(sec, ".") {
		sec += ".0"
	}
	return fmt.Sprintf("rate.NewLimiter(rate.Limit(%d/%s), %d)", l.Limit, sec, l.Burst)
}

// execDesign is a strategy of an adapter program (docs/adapters.md): the
// program builds the limiter afresh for every run, whose margin_ns is the
// one setting rlcheck can turn; rlcheck has no analytic model of it.
type execDesign struct {
	prog *adapter.Program
	name string
}

// noModel says why an adapter's design has no analytic worst case, and so
// no safe setting the search can prove.
const noModel = "an adapter program has no analytic model: the search suggests only settings whose worst case it can prove"

func (e *execDesign) Name() string      { return e.name }
func (e *execDesign) NoCosts() string   { return "" } // its runs carry every call's costs
func (e *execDesign) CallsOnly() string { return "" }

func (e *execDesign) Tuning() tuning { return tuning{family: designExec, noSetting: noModel} }

func (e *execDesign) Construct(cfg catalog.LibConfig) (runner, error) {
	return func(sc *workload.Scenario, seed uint64) (simulate.StrategyResult, error) {
		s := *sc
		s.Margin = cfg.Margin
		return simulate.RunExec(&s, e.prog, e.name, seed)
	}, nil
}

func (e *execDesign) Model(catalog.LibConfig, *Options) analysis { return analysis{why: noModel} }

func (e *execDesign) Code(cfg catalog.LibConfig, i int, r rule.Rule) string {
	return perWindowCode(cfg, i, r)
}

// Validate leaves the scenario to the program, which refuses what it
// cannot run with an error rlcheck reports.
func (e *execDesign) Validate(*workload.Scenario) error { return nil }

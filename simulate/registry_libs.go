package simulate

import (
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/libs"
)

// Names of the library-backed strategies.
const (
	XRateChained    = "xrate-chained"
	XRateReserveAll = "xrate-reserve-all"
	UberRatelimit   = "uber-ratelimit"
)

// LibStrategyNames lists the library-backed strategies, in table order.
func LibStrategyNames() []string { return []string{XRateChained, XRateReserveAll, UberRatelimit} }

// libStrategies are the table entries for the libraries as users configure
// them by default.
func libStrategies() []Strategy {
	out := make([]Strategy, 0, 3)
	for _, name := range LibStrategyNames() {
		st, _ := LibStrategy(name, libs.Default())
		out = append(out, st)
	}
	return out
}

// LibStrategy returns the library-backed strategy name with cfg, so callers
// such as `rlcheck audit` can run tuned settings through RunStrategy.
func LibStrategy(name string, cfg libs.Config) (Strategy, bool) {
	switch name {
	case XRateChained:
		return Strategy{
			Name: name, Doc: "golang.org/x/time/rate, one limiter per rule, waited on in turn",
			New: func(e Env) (strategies.Limiter, error) {
				return build(cfg, func() strategies.Limiter { return libs.NewXRateChained(e.Runtime, e.Rules, cfg) })
			},
		}, true
	case XRateReserveAll:
		return Strategy{
			Name: name, Doc: "golang.org/x/time/rate, reserve on every limiter, sleep the longest delay",
			New: func(e Env) (strategies.Limiter, error) {
				return build(cfg, func() strategies.Limiter { return libs.NewXRateReserveAll(e.Runtime, e.Rules, cfg) })
			},
		}, true
	case UberRatelimit:
		return Strategy{
			Name: name, Doc: "go.uber.org/ratelimit, one limiter per rule, taken in turn",
			New: func(e Env) (strategies.Limiter, error) {
				return build(cfg, func() strategies.Limiter { return libs.NewUber(e.Runtime, e.Rules, cfg) })
			},
		}, true
	}
	return Strategy{}, false
}

func build(cfg libs.Config, f func() strategies.Limiter) (strategies.Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return f(), nil
}

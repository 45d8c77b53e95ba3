package audit

import (
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/libs"
)

func mustRules(t *testing.T, s string) []rule.Rule {
	t.Helper()
	rs, err := rule.ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestSafeSettingsAreClean re-runs every suggested setting on every
// workload and seed and hands the sends straight to the checker.
func TestSafeSettingsAreClean(t *testing.T) {
	for _, contract := range []string{"5/1s,12/3s", "3/100ms,20/2s"} {
		t.Run(contract, func(t *testing.T) {
			opt := DefaultOptions(mustRules(t, contract))
			opt.Seeds, opt.Verify = 3, 6
			rep, err := Run(opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Strategies) != len(simulate.LibStrategyNames()) {
				t.Fatalf("%d strategies audited", len(rep.Strategies))
			}
			for _, sa := range rep.Strategies {
				if sa.Safe == nil {
					t.Errorf("%s: no safe setting found in %d tries", sa.Name, sa.Tried)
					continue
				}
				st, _ := simulate.LibStrategy(sa.Name, *sa.Safe)
				for _, wl := range rep.Workloads {
					sc := &simulate.Scenario{Name: wl.Name, Rules: opt.Rules, Strategies: []string{sa.Name}, Workers: 1,
						Callers: wl.Callers, Arrivals: wl.Arrivals, Lateness: opt.Lateness, OpCost: opt.OpCost}
					for seed := opt.Seed; seed < opt.Seed+uint64(opt.Verify); seed++ {
						res, err := simulate.RunStrategy(sc, st, seed, simulate.Options{})
						if err != nil {
							t.Fatal(err)
						}
						cr, err := checker.Check(res.Sends, checker.Config{Rules: opt.Rules})
						if err != nil {
							t.Fatal(err)
						}
						for _, rr := range cr.Rules {
							if rr.Violations != 0 {
								t.Errorf("%s %s seed %d: %d violations of %v", sa.Name, wl.Name, seed, rr.Violations, rr.Rule)
							}
						}
						if len(res.Sends) != res.Calls {
							t.Errorf("%s %s seed %d: %d sends for %d calls", sa.Name, wl.Name, seed, len(res.Sends), res.Calls)
						}
					}
				}
			}
		})
	}
}

// TestDefaultsViolateAfterIdle: every library as users configure it
// overfills the tightest window when a burst follows an idle spell.
func TestDefaultsViolateAfterIdle(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "5/1s,12/3s"))
	opt.Seeds, opt.NoSearch = 1, true
	rep, err := Run(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, sa := range rep.Strategies {
		o := sa.Outcomes[0]
		if o.Workload != "burst-after-idle" || o.Rules[0].MaxInWindow <= 5 || sa.Tried != 0 {
			t.Errorf("%s: %+v, tried %d", sa.Name, o, sa.Tried)
		}
	}
}

func TestWorkloads(t *testing.T) {
	w := Workloads(mustRules(t, "5/1s,12/3s"))
	if len(w) != 3 {
		t.Fatalf("%d workloads", len(w))
	}
	idle := w[0].Arrivals.Times
	if len(idle) != 37 || idle[0] != 0 || idle[1] != int64(6*time.Second) || idle[36] != idle[1] {
		t.Errorf("burst after idle: %d instants, %v...", len(idle), idle[:2])
	}
	if w[1].Arrivals.Every != 100*time.Millisecond || w[1].Callers != 60 {
		t.Errorf("steady: every %v, %d callers", w[1].Arrivals.Every, w[1].Callers)
	}
	if w[2].Arrivals.Rate != 4 || w[2].Callers != 48 {
		t.Errorf("poisson: rate %v, %d callers", w[2].Arrivals.Rate, w[2].Callers)
	}
}

func TestCode(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 10000, Window: 24 * time.Hour}}
	tests := []struct {
		name string
		cfg  libs.Config
		want string
	}{
		{simulate.XRateChained, libs.Default(), "rate.NewLimiter(rate.Limit(5/1.0), 5); rate.NewLimiter(rate.Limit(10000/86400.0), 10000)"},
		{simulate.XRateReserveAll, libs.Config{Burst: 1, Margin: 5 * time.Millisecond}, "rate.NewLimiter(rate.Limit(5/1.005), 1); rate.NewLimiter(rate.Limit(10000/86400.005), 1)"},
		{simulate.UberRatelimit, libs.Default(), "ratelimit.New(5, ratelimit.Per(time.Second), ratelimit.WithSlack(10)); ratelimit.New(10000, ratelimit.Per(24*time.Hour), ratelimit.WithSlack(10))"},
		{simulate.UberRatelimit, libs.Config{Margin: 2 * time.Millisecond}, "ratelimit.New(5, ratelimit.Per(1002*time.Millisecond), ratelimit.WithoutSlack); ratelimit.New(10000, ratelimit.Per(86400002*time.Millisecond), ratelimit.WithoutSlack)"},
	}
	for _, tt := range tests {
		if got := Code(tt.name, tt.cfg, rules); got != tt.want {
			t.Errorf("Code(%s, %+v) =\n %s\nwant\n %s", tt.name, tt.cfg, got, tt.want)
		}
	}
}

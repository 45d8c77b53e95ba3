package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// genScenario draws a small random workload: one to three rules with ties
// and exact-window gaps likely, bursts or streams of callers, timeouts
// half the time, and the asyncio-like runtime model.
func genScenario(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed, 99))
	s := &Scenario{
		Name:        fmt.Sprintf("gen-%d", seed),
		Callers:     5 + r.IntN(60),
		Workers:     1 + r.IntN(3),
		MaxInFlight: 1 + r.IntN(4),
		Lateness:    Dist{Kind: Uniform, A: 0, B: time.Duration(r.IntN(3)) * time.Millisecond},
		OpCost:      Dist{Kind: Uniform, A: 0, B: time.Duration(r.IntN(6)) * time.Microsecond},
		Seed:        seed,
	}
	for i := range 1 + r.IntN(3) {
		s.Rules = append(s.Rules, rule.Rule{Limit: 1 + r.IntN(6) + 3*i, Window: time.Duration(1+r.IntN(3)+i) * 100 * time.Millisecond})
	}
	switch r.IntN(3) {
	case 0:
		s.Arrivals = Arrivals{Kind: AllAtOnce}
	case 1:
		s.Arrivals = Arrivals{Kind: Interval, Every: time.Duration(1+r.IntN(50)) * time.Millisecond}
	default:
		s.Arrivals = Arrivals{Kind: Poisson, Rate: float64(5 + r.IntN(100))}
	}
	if r.IntN(2) == 0 {
		s.Timeout = time.Duration(50+r.IntN(500)) * time.Millisecond
	}
	s.CallDuration = Dist{Kind: Exponential, A: time.Duration(r.IntN(200)) * time.Millisecond}
	for w := range s.Workers {
		s.Skew = append(s.Skew, time.Duration(r.IntN(5)-2)*time.Millisecond*time.Duration(w))
	}
	for _, st := range strategyTable {
		s.Strategies = append(s.Strategies, st.Name)
	}
	return s
}

// watched wraps a worker's runtime and fails the test if a sleep returns
// before its time: nil before now+d, or a deadline error before the
// deadline.
type watched struct {
	clock.Runtime
	t      *testing.T
	sched  *Sched
	sleeps *int
}

func (w watched) Sleep(ctx context.Context, d time.Duration) error {
	start := w.sched.Now()
	err := w.Runtime.Sleep(ctx, d)
	now := w.sched.Now()
	*w.sleeps++
	if err == nil && now < start+int64(d) {
		w.t.Errorf("slept %v from %d, woke at %d: early", d, start, now)
	}
	if dl, ok := Deadline(ctx); ok && err != nil && now < dl {
		w.t.Errorf("deadline %d reported at %d: early", dl, now)
	}
	return err
}

// raceEnabled is set under the race detector, which slows every coroutine
// switch tenfold.
var raceEnabled bool

// workloads is how many generated workloads the suite runs.
func workloads() uint64 {
	if testing.Short() || raceEnabled {
		return 30
	}
	return 120
}

func TestConformance(t *testing.T) {
	total := 0
	defer func() {
		if total == 0 {
			t.Error("no sleep went through the watched runtime")
		}
	}()
	for seed := range workloads() {
		s := genScenario(seed)
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, st := range strategyTable {
			if st.NeedsRedis && seed%29 != 0 {
				continue // a script round trip per call: a sample of workloads keeps the suite fast
			}
			sleeps := 0
			var sch *Sched
			opt := Options{Wrap: func(rt clock.Runtime) clock.Runtime {
				if sch == nil {
					sch = schedOf(rt)
				}
				return watched{Runtime: rt, t: t, sched: sch, sleeps: &sleeps}
			}}
			res, err := RunStrategy(s, st, seed, opt)
			if err != nil {
				t.Fatalf("%s on %s: %v", st.Name, s.Name, err)
			}
			total += sleeps
			where := fmt.Sprintf("%s on %s (%d callers, %d workers, rules %v, timeout %v)", st.Name, s.Name, s.Callers, s.Workers, s.Rules, s.Timeout)
			if got := len(res.Sends) + res.Cancelled; got != res.Calls {
				t.Errorf("%s: %d sends + %d cancelled != %d calls", where, len(res.Sends), res.Cancelled, res.Calls)
			}
			if res.Sched.EarlyWakes != 0 || res.Sched.Abandoned != 0 {
				t.Errorf("%s: scheduler stats %+v", where, res.Sched)
			}
			if st.NeedsSlots && res.MaxInFlight > s.MaxInFlight {
				t.Errorf("%s: %d in flight, cap %d", where, res.MaxInFlight, s.MaxInFlight)
			}
			checkAll := st.CheckAll || (st.Name == "local-per-worker" && s.Workers == 1)
			if !checkAll {
				continue
			}
			for _, rr := range res.Rules {
				if rr.Violations != 0 {
					t.Errorf("%s: %d violations of %v", where, rr.Violations, rr.Rule)
				}
				if rr.Leaked != 0 {
					t.Errorf("%s: %d records of %v with no send", where, rr.Leaked, rr.Rule)
				}
			}
		}
	}
}

// TestConformanceCanFail makes sure the suite's checks bite: the wrong
// designs it exempts do violate and leak on the same generated workloads.
func TestConformanceCanFail(t *testing.T) {
	found := map[string]bool{}
	for seed := range workloads() {
		s := genScenario(seed)
		for _, name := range []string{"sequential", "gated-rates-first"} {
			st, _ := Lookup(name)
			res, err := RunStrategy(s, st, seed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, rr := range res.Rules {
				if rr.Violations > 0 {
					found[name+" violates"] = true
				}
				if rr.Leaked > 0 {
					found[name+" leaks"] = true
				}
			}
		}
	}
	for _, want := range []string{"sequential violates", "sequential leaks", "gated-rates-first leaks"} {
		if !found[want] {
			t.Errorf("no generated workload shows that %s", want)
		}
	}
}

func schedOf(rt clock.Runtime) *Sched {
	switch v := rt.(type) {
	case *Sched:
		return v
	case view:
		return v.s
	}
	panic("not a virtual runtime")
}

func TestSameSeedSameSends(t *testing.T) {
	s := genScenario(7)
	a, err := Run(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Run(s, Options{})
	for i := range a.Strategies {
		if !equal(a.Strategies[i].Sends, b.Strategies[i].Sends) {
			t.Fatalf("%s: two runs on one seed differ", a.Strategies[i].Name)
		}
	}
	s.Seed++
	c, _ := Run(s, Options{})
	if equal(a.Strategies[0].Sends, c.Strategies[0].Sends) {
		t.Fatalf("seeds %d and %d gave the same sends", s.Seed-1, s.Seed)
	}
}

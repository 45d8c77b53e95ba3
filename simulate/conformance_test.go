package simulate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// genScenario draws a small random workload: one to three rules with ties
// and exact-window gaps likely, bursts or streams of callers, timeouts
// half the time, and the asyncio-like runtime model.
func genScenario(seed uint64) *workload.Scenario {
	r := rand.New(rand.NewPCG(seed, 99))
	s := &workload.Scenario{
		Name:        fmt.Sprintf("gen-%d", seed),
		Callers:     5 + r.IntN(60),
		Workers:     1 + r.IntN(3),
		MaxInFlight: 1 + r.IntN(4),
		Lateness:    workload.Dist{Kind: workload.Uniform, A: 0, B: time.Duration(r.IntN(3)) * time.Millisecond},
		OpCost:      workload.Dist{Kind: workload.Uniform, A: 0, B: time.Duration(r.IntN(6)) * time.Microsecond},
		Seed:        seed,
	}
	for i := range 1 + r.IntN(3) {
		s.Rules = append(s.Rules, rule.Rule{Limit: 1 + r.IntN(6) + 3*i, Window: time.Duration(1+r.IntN(3)+i) * 100 * time.Millisecond})
	}
	switch r.IntN(3) {
	case 0:
		s.Arrivals = workload.Arrivals{Kind: workload.AllAtOnce}
	case 1:
		s.Arrivals = workload.Arrivals{Kind: workload.Interval, Every: time.Duration(1+r.IntN(50)) * time.Millisecond}
	default:
		s.Arrivals = workload.Arrivals{Kind: workload.Poisson, Rate: float64(5 + r.IntN(100))}
	}
	if r.IntN(2) == 0 {
		s.Timeout = time.Duration(50+r.IntN(500)) * time.Millisecond
	}
	s.CallDuration = workload.Dist{Kind: workload.Exponential, A: time.Duration(r.IntN(200)) * time.Millisecond}
	for w := range s.Workers {
		s.Skew = append(s.Skew, time.Duration(r.IntN(5)-2)*time.Millisecond*time.Duration(w))
	}
	for _, st := range catalog.Strategies() {
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
	sched  *virtual.Sched
	sleeps *int
}

func (w watched) Sleep(ctx context.Context, d time.Duration) error {
	start := w.sched.Now()
	err := w.Runtime.Sleep(ctx, d)
	now := w.sched.Now()
	*w.sleeps++
	if err == nil {
		assert.GreaterOrEqual(w.t, now, start+int64(d), "slept %v from %d, woke at %d: early", d, start, now)
	}
	if dl, ok := virtual.Deadline(ctx); ok && err != nil {
		assert.GreaterOrEqual(w.t, now, dl, "deadline %d reported at %d: early", dl, now)
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
	return testrun.Seeds[uint64](40, 120)
}

// TestConformance runs one behaviour suite over every strategy: the same
// generated workloads, the same checks. It stays plain subtests, one per
// strategy, rather than a testify suite: the checks are invariants of one
// run's result, so there is no setup or teardown for a suite to share, and
// a suite's methods would each re-run the simulations or hide them in
// SetupSuite.
func TestConformance(t *testing.T) {
	var scenarios []*workload.Scenario
	for seed := range workloads() {
		s := genScenario(seed)
		require.NoError(t, catalog.Validate(s), s.Name)
		scenarios = append(scenarios, s)
	}
	total := 0
	for _, st := range catalog.Strategies() {
		t.Run(st.Name, func(t *testing.T) {
			for _, s := range scenarios {
				if st.NeedsRedis && s.Seed%29 != 0 {
					continue // a script round trip per call: a sample of workloads keeps the suite fast
				}
				total += conform(t, st, s)
			}
		})
	}
	assert.NotZero(t, total, "no sleep went through the watched runtime")
}

// conform runs st on s through the watched runtime, checks what every
// strategy must keep, and returns how many sleeps it watched.
func conform(t *testing.T, st catalog.Strategy, s *workload.Scenario) int {
	t.Helper()
	sleeps := 0
	var sch *virtual.Sched
	opt := Options{Wrap: func(rt clock.Runtime) clock.Runtime {
		if sch == nil {
			sch = schedOf(rt)
		}
		return watched{Runtime: rt, t: t, sched: sch, sleeps: &sleeps}
	}}
	res, err := RunStrategy(s, st, s.Seed, opt)
	require.NoError(t, err, "%s on %s", st.Name, s.Name)
	where := fmt.Sprintf("%s on %s (%d callers, %d workers, rules %v, timeout %v)", st.Name, s.Name, s.Callers, s.Workers, s.Rules, s.Timeout)
	assert.Equal(t, res.Calls, len(res.Sends)+res.Cancelled, "%s: %d sends + %d cancelled != %d calls", where, len(res.Sends), res.Cancelled, res.Calls)
	assert.Zero(t, res.Sched.EarlyWakes, "%s: early wakes; scheduler stats %+v", where, res.Sched)
	assert.Zero(t, res.Sched.Abandoned, "%s: abandoned callers; scheduler stats %+v", where, res.Sched)
	if st.NeedsSlots {
		assert.LessOrEqual(t, res.MaxInFlight, s.MaxInFlight, "%s: calls in flight beyond the cap", where)
	}
	if st.CheckAll || (st.Name == "local-per-worker" && s.Workers == 1) {
		for _, rr := range res.Rules {
			assert.Zero(t, rr.Violations, "%s: violations of %v", where, rr.Rule)
			assert.Zero(t, rr.Leaked, "%s: records of %v with no send", where, rr.Rule)
		}
	}
	return sleeps
}

// TestConformanceCanFail makes sure the suite's checks bite: the wrong
// designs it exempts do violate and leak on the same generated workloads.
func TestConformanceCanFail(t *testing.T) {
	found := map[string]bool{}
	for seed := range workloads() {
		s := genScenario(seed)
		for _, name := range []string{"sequential", "gated-rates-first"} {
			st, _ := catalog.Lookup(name)
			res, err := RunStrategy(s, st, seed, Options{})
			require.NoError(t, err, "%s on %s", name, s.Name)
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
		assert.True(t, found[want], "no generated workload shows that %s", want)
	}
}

func schedOf(rt clock.Runtime) *virtual.Sched {
	if s := virtual.Of(rt); s != nil {
		return s
	}
	panic("not a virtual runtime")
}

func TestSameSeedSameSends(t *testing.T) {
	s := genScenario(7)
	a, err := Run(s, Options{})
	require.NoError(t, err)
	b, err := Run(s, Options{})
	require.NoError(t, err)
	for i := range a.Strategies {
		require.Equal(t, a.Strategies[i].Sends, b.Strategies[i].Sends, "%s: two runs on one seed differ", a.Strategies[i].Name)
	}
	s.Seed++
	c, err := Run(s, Options{})
	require.NoError(t, err)
	assert.NotEqual(t, a.Strategies[0].Sends, c.Strategies[0].Sends, "seeds %d and %d gave the same sends", s.Seed-1, s.Seed)
}

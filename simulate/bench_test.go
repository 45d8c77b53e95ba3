package simulate

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

var contract = []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour}}

// BenchmarkCombinedAdmitted drives combined over 10/s, 500/min and
// 10,000/day on the virtual runtime with one caller per call, for exactly
// one day's quota; admitted/s counts calls let through per second of wall
// time. Arrivals every 100 ms outpace 500/min, so callers queue on the
// lock and wait; every 150 ms they do not.
func BenchmarkCombinedAdmitted(b *testing.B) {
	for _, every := range []time.Duration{100 * time.Millisecond, 150 * time.Millisecond} {
		b.Run("every="+every.String(), func(b *testing.B) {
			const calls = 10_000
			s := &Scenario{
				Name: "bench", Rules: contract, Strategies: []string{"combined"},
				Callers: calls, Workers: 1, Arrivals: Arrivals{Kind: Interval, Every: every},
			}
			st, _ := Lookup("combined")
			var admitted int
			cpu := cpuSeconds()
			for b.Loop() {
				r, err := RunStrategy(s, st, 1, Options{})
				if err != nil {
					b.Fatal(err)
				}
				admitted += len(r.Sends)
			}
			b.ReportMetric(float64(admitted)/b.Elapsed().Seconds(), "admitted/s")
			b.ReportMetric(float64(admitted)/(cpuSeconds()-cpu), "admitted/cpu-s")
		})
	}
}

// BenchmarkCombinedLoop is one caller acquiring back to back: the cost of
// the decision logic plus one park per wait, with no caller start-up.
func BenchmarkCombinedLoop(b *testing.B) {
	const calls = 1_000_000
	var admitted int
	cpu := cpuSeconds()
	for b.Loop() {
		sch := NewSched(SchedConfig{})
		lim := strategies.NewCombined(sch, contract...)
		sch.Go(0, func() {
			for range calls {
				if lim.Acquire(context.Background()) == nil {
					admitted++
				}
			}
		})
		sch.Run()
	}
	b.ReportMetric(float64(admitted)/b.Elapsed().Seconds(), "admitted/s")
	b.ReportMetric(float64(admitted)/(cpuSeconds()-cpu), "admitted/cpu-s")
}

// peakProbe is a runtime view whose mutex reads the heap and stack in use
// at the n-th Lock: in an all-at-once run under a rule of one call, every
// caller then exists at once, parked on combined's lock.
type peakProbe struct {
	clock.Runtime
	locks, n int
	peak     uint64
}

type probeMutex struct {
	clock.Mutex
	p *peakProbe
}

func (p *peakProbe) NewMutex() clock.Mutex { return probeMutex{p.Runtime.NewMutex(), p} }

func (m probeMutex) Lock(ctx context.Context) error {
	if m.p.locks++; m.p.locks == m.p.n {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		m.p.peak = ms.HeapInuse + ms.StackInuse
	}
	return m.Mutex.Lock(ctx)
}

// BenchmarkCallerBytes measures what a caller costs while every caller of
// an all-at-once scenario is alive, parked on combined's lock: bytes/caller
// is the heap and stack in use then, less the figure before the run, over
// the callers. It sizes maxCallers.
func BenchmarkCallerBytes(b *testing.B) {
	const callers = 100_000
	s := &Scenario{
		Name: "bench", Rules: []rule.Rule{{Limit: 1, Window: time.Millisecond}}, Strategies: []string{"combined"},
		Callers: callers, Workers: 1, Arrivals: Arrivals{Kind: AllAtOnce},
	}
	st, _ := Lookup("combined")
	var perCaller float64
	for b.Loop() {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		before := m.HeapInuse + m.StackInuse
		probe := &peakProbe{n: callers}
		_, err := RunStrategy(s, st, 1, Options{Wrap: func(rt clock.Runtime) clock.Runtime {
			probe.Runtime = rt
			return probe
		}})
		if err != nil {
			b.Fatal(err)
		}
		perCaller = float64(probe.peak-before) / callers
	}
	b.ReportMetric(perCaller, "bytes/caller")
}

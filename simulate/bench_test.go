package simulate

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
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
			s := &workload.Scenario{
				Name: "bench", Rules: contract, Strategies: []string{"combined"},
				Callers: calls, Workers: 1, Arrivals: workload.Arrivals{Kind: workload.Interval, Every: every},
			}
			st, _ := catalog.Lookup("combined")
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
		sch := virtual.NewSched(virtual.Config{})
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
// is the heap and stack in use then, less the figure before the run (with
// no coroutine kept from earlier runs), over the callers. It sizes
// maxCallers.
func BenchmarkCallerBytes(b *testing.B) {
	const callers = 100_000
	s := &workload.Scenario{
		Name: "bench", Rules: []rule.Rule{{Limit: 1, Window: time.Millisecond}}, Strategies: []string{"combined"},
		Callers: callers, Workers: 1, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce},
	}
	st, _ := catalog.Lookup("combined")
	var perCaller float64
	for b.Loop() {
		virtual.ReleasePools()
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

// seedScenario is scenarios/seed.yaml: 30 callers at once under 5/1s and
// 12/3s, timers 0.1–3 ms late.
func seedScenario(b *testing.B) *workload.Scenario {
	lateness, err := workload.ParseDist("uniform(100us, 3ms)")
	if err != nil {
		b.Fatal(err)
	}
	cost, err := workload.ParseDist("uniform(3us, 6us)")
	if err != nil {
		b.Fatal(err)
	}
	return &workload.Scenario{
		Name: "seed", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Strategies: []string{"sequential", "combined", "gated", "gated-rates-first", "combined-counter"},
		Callers:    30, Workers: 1, MaxInFlight: 4, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce},
		Lateness: lateness, OpCost: cost, Seed: 1,
	}
}

// BenchmarkRunSeeds is `rlcheck simulate seed --runs 1000`: five
// strategies over 1,000 seeds, spread over the cores. It reports the CPU
// time and allocations per run (one strategy on one seed).
func BenchmarkRunSeeds(b *testing.B) {
	s := seedScenario(b)
	const seeds = 1000
	runs := seeds * len(s.Strategies)
	cpu := cpuSeconds()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		if _, err := RunSeeds(s, seeds, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms1)
	n := float64(b.N * runs)
	b.ReportMetric((cpuSeconds()-cpu)*1e6/n, "cpu-µs/run")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/run")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/n, "B/run")
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "GCs/op")
}

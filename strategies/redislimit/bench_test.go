package redislimit

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// benchWorkers is how many goroutines call Redis at once.
const benchWorkers = 16

// trivialScript is the floor the admission script is measured against: the
// same EVALSHA round trip doing nothing.
var trivialScript = redis.NewScript("return 0")

// neverBind are three rules of realistic windows whose limits no benchmark
// reaches, so every call is admitted and recorded in all three sets.
var neverBind = []rule.Rule{
	{Limit: 1 << 30, Window: time.Second},
	{Limit: 1 << 30, Window: time.Minute},
	{Limit: 1 << 30, Window: time.Hour},
}

// BenchmarkLoopback compares, on a real redis-server over loopback with 16
// goroutines, the admission script (3 rules, server time) with a trivial
// script; both report calls per second as "calls/s".
//
//	go test -run '^$' -bench Loopback -benchtime 3s -count 5 ./strategies/redislimit/
func BenchmarkLoopback(b *testing.B) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers})
	defer c.Close()
	var run atomic.Int64
	parallel := func(b *testing.B, call func(ctx context.Context) error) {
		b.SetParallelism(max(1, benchWorkers/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				if err := call(ctx); err != nil {
					assert.NoError(b, err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	}
	b.Run("trivial-evalsha", func(b *testing.B) {
		require.NoError(b, trivialScript.Load(context.Background(), c).Err())
		parallel(b, func(ctx context.Context) error {
			return trivialScript.Run(ctx, c, nil).Err()
		})
	})
	admit := func(b *testing.B, withDeadline bool) {
		l, err := New(c, clock.NewReal(), neverBind, Options{Key: fmt.Sprintf("bench-%d", run.Add(1))})
		require.NoError(b, err)
		parallel(b, func(ctx context.Context) error {
			if withDeadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
			}
			return l.Acquire(ctx)
		})
		require.Equal(b, int64(b.N), l.Runs(), "script runs for b.N calls: a rule bound")
	}
	b.Run("admit-3-rules", func(b *testing.B) { admit(b, false) })
	b.Run("admit-3-rules-deadline", func(b *testing.B) { admit(b, true) })
}

// BenchmarkLoopbackPaired measures the trivial script, the admission
// script over exact sets and the same rules under the default policy
// (bucket hashes, since no limit is small; the exact sets under
// Options.Exact) in alternating
// slices of 250 ms, one round per b.N, so that load from other processes
// falls on all alike. It reports each rate, the medians of the ratios taken
// within each round (exact against trivial, bounded against exact), the
// server's own CPU time per EVALSHA (INFO commandstats), which the client
// side does not blur, and the CPU time of this process (the client) per
// call.
//
//	go test -run '^$' -bench LoopbackPaired -benchtime 12x ./strategies/redislimit/
func BenchmarkLoopbackPaired(b *testing.B) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers})
	defer c.Close()
	ctx := context.Background()
	exact, err := New(c, clock.NewReal(), neverBind, Options{Key: "paired", Exact: true})
	require.NoError(b, err)
	bounded, err := New(c, clock.NewReal(), neverBind, Options{Key: "paired-bounded"})
	require.NoError(b, err)
	type contender struct {
		name string
		call func(context.Context) error
		n    int64
		d    time.Duration
		us   float64
		cpu  time.Duration // this process's CPU: the client
		rate float64       // in the current round
	}
	cs := []*contender{
		{name: "trivial", call: func(ctx context.Context) error { return trivialScript.Run(ctx, c, nil).Err() }},
		{name: "admit", call: exact.Acquire},
		{name: "bounded", call: bounded.Acquire},
	}
	var exactRatios, boundedRatios []float64
	round := 0
	for b.Loop() {
		// Rotate the order each round, so no contender always follows
		// another.
		for i := range cs {
			p := cs[(i+round)%len(cs)]
			require.NoError(b, c.ConfigResetStat(ctx).Err())
			cpu := processCPU(b)
			n, d := slice(b, p.call, 250*time.Millisecond)
			p.cpu += processCPU(b) - cpu
			p.n += n
			p.d += d
			p.us += evalshaStat(b, c, "usec_per_call") * float64(n)
			p.rate = float64(n) / d.Seconds()
		}
		round++
		exactRatios = append(exactRatios, cs[1].rate/cs[0].rate)
		boundedRatios = append(boundedRatios, cs[2].rate/cs[1].rate)
	}
	// The commands inside the last slice, to see where its server time
	// goes; shown with -v.
	if info, err := c.Info(ctx, "commandstats").Result(); err == nil {
		for _, line := range strings.Split(info, "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"); ok {
				b.Logf("inside the last slice: %s", f)
			}
		}
	}
	median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	for _, p := range cs {
		b.ReportMetric(float64(p.n)/p.d.Seconds(), p.name+"-calls/s")
		b.ReportMetric(p.us/float64(p.n), p.name+"-server-µs/call")
		b.ReportMetric(float64(p.cpu.Microseconds())/float64(p.n), p.name+"-client-cpu-µs/call")
	}
	b.ReportMetric(median(exactRatios), "ratio-median")
	b.ReportMetric(median(boundedRatios), "bounded/exact-median")
}

// slice runs call from benchWorkers goroutines for about d and returns how
// many calls completed and how long it took.
func slice(b *testing.B, call func(context.Context) error, d time.Duration) (int64, time.Duration) {
	var (
		n    atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	start := time.Now()
	for range benchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if err := call(context.Background()); err != nil {
					assert.NoError(b, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	return n.Load(), time.Since(start)
}

// processCPU is the CPU time this process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &u))
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// evalshaStat reads one field of the server's EVALSHA statistics since the
// last CONFIG RESETSTAT: "usec" (total CPU time, µs) or "usec_per_call".
func evalshaStat(b *testing.B, c *redis.Client, field string) float64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(b, err)
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, field+"="); ok {
				x, err := strconv.ParseFloat(v, 64)
				require.NoError(b, err)
				return x
			}
		}
	}
	require.FailNow(b, "no cmdstat_evalsha in INFO commandstats")
	return 0
}

// BenchmarkLuaPrimitives measures what the pieces of a script run cost a
// real redis-server: each is run 20,000 times in a Lua loop inside one
// EVAL, and the server's CPU (INFO cpu, user + system) over the loop is
// reported per piece as "<piece>-µs".
//
//	go test -run '^$' -bench LuaPrimitives -benchtime 1x ./strategies/redislimit/
func BenchmarkLuaPrimitives(b *testing.B) {
	c := redis.NewClient(&redis.Options{Addr: redistest.Start(b).Addr})
	defer c.Close()
	ctx := context.Background()
	const n = 20000
	pieces := []struct{ name, body string }{
		{"loop", ""},
		{"TIME", "local t = redis.call('TIME')"},
		{"HINCRBY", "redis.call('HINCRBY', KEYS[1], 'n', '1')"},
		{"HMGET-2", "local h = redis.call('HMGET', KEYS[1], 'n', 'm')"},
		{"HMGET-5", "local h = redis.call('HMGET', KEYS[1], 'n', 'm', 'a', 'b', 'c')"},
		{"HMGET-14", "local h = redis.call('HMGET', KEYS[1], 'n', 'm', 'a:t', 'a:b', 'a:f', 'a:l', 'b:t', 'b:b', 'b:f', 'b:l', 'c:t', 'c:b', 'c:f', 'c:l')"},
		{"HSET-1", "redis.call('HSET', KEYS[1], 'n', '12345')"},
		{"HSET-6", "redis.call('HSET', KEYS[1], 'n', '1', 'a:t', '2', 'b:t', '3', 'c:t', '4', 'm', 'p:1', 'a', '1780000000000000')"},
		{"ZRANGE", "local e = redis.call('ZRANGE', KEYS[2], '-5', '-5', 'WITHSCORES')"},
		{"tonumber", "local x = tonumber('1780000000')"},
		{"tonumber-16", "local x = tonumber('6a18e4c80', 16)"},
		{"concat", "local x = KEYS[1] .. 't'"},
		{"plus0", "local x = KEYS[3] + 0"},
		{"format", "local s = string.format('%d', i)"},
		{"pack", "local s = struct.pack('<dddd', i, i, 100, 107)"},
		{"table", "local t = {0, 0, 0, 0, 0, 0, 0, 0}"},
	}
	cpu := func() float64 {
		info, err := c.Info(ctx, "cpu").Result()
		require.NoError(b, err)
		var sum float64
		for _, line := range strings.Split(info, "\n") {
			for _, k := range []string{"used_cpu_user:", "used_cpu_sys:"} {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), k); ok {
					x, err := strconv.ParseFloat(v, 64)
					require.NoError(b, err)
					sum += x
				}
			}
		}
		return sum
	}
	for b.Loop() {
		for _, p := range pieces {
			script := "for i = 1, " + strconv.Itoa(n) + " do " + p.body + " end return 0"
			before := cpu()
			require.NoError(b, c.Eval(ctx, script, []string{"{lua}h", "{lua}z", "1780000000"}).Err())
			b.ReportMetric((cpu()-before)/n*1e6, p.name+"-µs")
		}
	}
	b.Logf("load %s", loadavg())
}

// BenchmarkWeightedPaired pairs weighted and unweighted admission on a
// real redis-server over loopback, 16 goroutines, alternating slices of
// 250 ms in one run: the unweighted limiter of neverBind's three call
// rules, and a weighted one whose last two rules meter tokens (calls of
// 100 tokens), both under the default policy. It reports each one's
// calls/s and the median over the rounds of weighted/unweighted (run at
// least 10 rounds: -benchtime 10x or more).
//
//	go test -run '^$' -bench WeightedPaired -benchtime 20x ./strategies/redislimit/
func BenchmarkWeightedPaired(b *testing.B) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers})
	defer c.Close()
	plain, err := New(c, clock.NewReal(), neverBind, Options{Key: "plain"})
	require.NoError(b, err)
	costly := slices.Clone(neverBind)
	costly[1].Unit, costly[2].Unit = "tokens", "tokens"
	weighted, err := New(c, clock.NewReal(), costly, Options{Key: "weighted"})
	require.NoError(b, err)
	tokens := []int64{100}
	calls := []func(context.Context) error{
		plain.Acquire,
		func(ctx context.Context) error { return weighted.AcquireCost(ctx, tokens) },
	}
	var n [2]int64
	var d [2]time.Duration
	var ratios []float64
	round := 0
	for b.Loop() {
		var rate [2]float64
		for i := range calls {
			j := (i + round) % 2
			k, t := slice(b, calls[j], 250*time.Millisecond)
			n[j], d[j], rate[j] = n[j]+k, d[j]+t, float64(k)/t.Seconds()
		}
		round++
		ratios = append(ratios, rate[1]/rate[0])
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(n[0])/d[0].Seconds(), "unweighted-calls/s")
	b.ReportMetric(float64(n[1])/d[1].Seconds(), "weighted-calls/s")
	b.ReportMetric(ratios[len(ratios)/2], "weighted/unweighted-median")
}

// BenchmarkReservePaired pairs, on a real redis-server over loopback, 16
// goroutines, alternating slices of 250 ms in one run: an admission
// without reservation (AcquireCost), and a Reserve followed by its
// Settle, each timed apart, on two limiters of neverBind's rules whose
// last two meter tokens (calls of 100 tokens, settled to 40). It reports
// the µs per operation of each, and the medians over the rounds of
// reserve/admit and settle/admit (run at least 10 rounds).
//
//	go test -run '^$' -bench ReservePaired -benchtime 20x ./strategies/redislimit/
func BenchmarkReservePaired(b *testing.B) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers})
	defer c.Close()
	costly := slices.Clone(neverBind)
	costly[1].Unit, costly[2].Unit = "tokens", "tokens"
	plain, err := New(c, clock.NewReal(), costly, Options{Key: "admit"})
	require.NoError(b, err)
	reserving, err := New(c, clock.NewReal(), costly, Options{Key: "reserve"})
	require.NoError(b, err)
	est, actual := []int64{100}, []int64{40}
	var took [3]atomic.Int64 // ns spent in admissions, reservations, settlements
	timed := func(k int, f func() error) error {
		t0 := time.Now()
		err := f()
		took[k].Add(int64(time.Since(t0)))
		return err
	}
	calls := []func(context.Context) error{
		func(ctx context.Context) error { return timed(0, func() error { return plain.AcquireCost(ctx, est) }) },
		func(ctx context.Context) error {
			var res *strategies.Reservation
			if err := timed(1, func() (err error) { res, err = reserving.Reserve(ctx, est); return err }); err != nil {
				return err
			}
			return timed(2, func() error { return res.Settle(actual) })
		},
	}
	var n [2]int64
	var perOp [3]float64
	var reserveRatios, settleRatios []float64
	round := 0
	for b.Loop() {
		var us [3]float64
		for i := range calls {
			j := (i + round) % 2
			before := [3]int64{took[0].Load(), took[1].Load(), took[2].Load()}
			k, _ := slice(b, calls[j], 250*time.Millisecond)
			n[j] += k
			for op := range 3 {
				if d := took[op].Load() - before[op]; d > 0 {
					us[op] = float64(d) / 1e3 / float64(k)
				}
			}
		}
		round++
		reserveRatios = append(reserveRatios, us[1]/us[0])
		settleRatios = append(settleRatios, us[2]/us[0])
	}
	perOp[0] = float64(took[0].Load()) / 1e3 / float64(n[0])
	perOp[1] = float64(took[1].Load()) / 1e3 / float64(n[1])
	perOp[2] = float64(took[2].Load()) / 1e3 / float64(n[1])
	median := func(x []float64) float64 { slices.Sort(x); return x[len(x)/2] }
	b.ReportMetric(perOp[0], "admit-µs/op")
	b.ReportMetric(perOp[1], "reserve-µs/op")
	b.ReportMetric(perOp[2], "settle-µs/op")
	b.ReportMetric(median(reserveRatios), "reserve/admit-median")
	b.ReportMetric(median(settleRatios), "settle/admit-median")
}

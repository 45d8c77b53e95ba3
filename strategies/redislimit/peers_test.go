package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
)

// peerKeys is how many API keys the binding rules are spread over, so
// that 16 goroutines calling without pause seldom find a key full.
const peerKeys = 2000

// BenchmarkPeers measures, on one real redis-server over loopback with 16
// goroutines, a single admission decision (one script run, no waiting) of
// rlcheck against go-redis/redis_rate v10, the limiter people use instead,
// in alternating slices of 250 ms, peerRounds rounds, the order rotating:
//
//   - trivial: EVALSHA of "return 0", the floor;
//   - rate-1: redis_rate Allow on one rule (the first of the three);
//   - rate-chained: redis_rate Allow on each of the three rules in turn
//     (stopping at the first refusal, as a caller chaining it would);
//   - default: rlcheck's admission over the three rules, default policy;
//   - exact: the same with Options.Exact (one sorted set for the three).
//
// Two rule sets: never-bind (2^30 per 1s, 1m, 1h: every call admitted)
// and binding (10/s, 500/min, 10000/day, spread over peerKeys keys). It
// logs, as min / median / max over rounds, each rate, the server's time
// per call (INFO commandstats, EVALSHA time per decision), this process's
// CPU per call (the client: go-redis, the sockets, the scheduler; on two
// cores it shares the machine with the server) and the paired
// ratios default/rate-1, default/rate-chained and exact/trivial taken
// within each round, and reports the medians (and the ratios' minima) as
// metrics. It takes about 35 s whatever -benchtime says.
//
//	go test -run '^$' -bench Peers -benchtime 1x ./strategies/redislimit/
func BenchmarkPeers(b *testing.B) {
	binding, err := rule.ParseList("10/s,500/min,10000/day")
	require.NoError(b, err)
	for _, set := range []struct {
		name  string
		rules []rule.Rule
		keys  int
	}{{"never-bind", neverBind, 1}, {"binding", binding, peerKeys}} {
		b.Run(set.name, func(b *testing.B) { benchPeers(b, set.rules, set.keys) })
	}
}

// peer is one contender of BenchmarkPeers.
type peer struct {
	name string
	call func(context.Context) error
	n    int64
	d    time.Duration
	us   float64 // server EVALSHA µs, summed
	rate float64 // in the current slice
}

func benchPeers(b *testing.B, rules []rule.Rule, keys int) {
	s := redistest.Start(b)
	// Context timeouts on, as Dial sets them: rlcheck's limiters then run
	// the script on the caller's goroutine; redis_rate's calls carry no
	// deadline and do not notice.
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers, ContextTimeoutEnabled: true})
	defer c.Close()
	ctx := context.Background()
	require.NoError(b, trivialScript.Load(ctx, c).Err())
	rr := redis_rate.NewLimiter(c)
	limits := make([]redis_rate.Limit, len(rules))
	for i, r := range rules {
		limits[i] = redis_rate.Limit{Rate: r.Limit, Burst: r.Limit, Period: r.Window}
	}
	names := make([]string, keys)
	for i := range names {
		names[i] = "peer-" + strconv.Itoa(i)
	}
	mk := func(exact bool) []*Limiter {
		ls := make([]*Limiter, keys)
		for i := range ls {
			l, err := New(c, clock.NewReal(), rules, Options{Key: names[i] + map[bool]string{true: "-x"}[exact], Exact: exact})
			require.NoError(b, err)
			ls[i] = l
		}
		return ls
	}
	dflt, exact := mk(false), mk(true)
	once := func(ls []*Limiter) func(context.Context) error {
		return func(ctx context.Context) error {
			l := ls[rand.IntN(len(ls))]
			n := l.counter.Add(1)
			_, _, _, err := l.try(ctx, l.prefix+strconv.FormatUint(n, 10), n%sweepEvery == 0)
			return err
		}
	}
	ps := []*peer{
		{name: "trivial", call: func(ctx context.Context) error { return trivialScript.Run(ctx, c, nil).Err() }},
		{name: "rate-1", call: func(ctx context.Context) error {
			_, err := rr.Allow(ctx, "rr1:"+names[rand.IntN(keys)], limits[0])
			return err
		}},
		{name: "rate-chained", call: func(ctx context.Context) error {
			k := names[rand.IntN(keys)]
			for i, lim := range limits {
				res, err := rr.Allow(ctx, "rr"+strconv.Itoa(len(limits))+":"+strconv.Itoa(i)+":"+k, lim)
				if err != nil || res.Allowed == 0 {
					return err
				}
			}
			return nil
		}},
		{name: "default", call: once(dflt)},
		{name: "exact", call: once(exact)},
	}
	// One b.Loop iteration runs every round, so the benchmark takes about
	// peerRounds × 5 × 250 ms per rule set whatever -benchtime says.
	rates := map[string][]float64{}
	perCall := map[string][]float64{}
	clientCPU := map[string][]float64{}
	for b.Loop() {
		for round := range peerRounds {
			for i := range ps {
				p := ps[(i+round)%len(ps)]
				require.NoError(b, c.ConfigResetStat(ctx).Err())
				cpu := processCPU(b)
				n, d := slice(b, p.call, 250*time.Millisecond)
				clientCPU[p.name] = append(clientCPU[p.name], float64((processCPU(b)-cpu).Microseconds())/float64(max(n, 1)))
				p.n += n
				p.d += d
				us := evalshaStat(b, c, "usec")
				p.us += us
				p.rate = float64(n) / d.Seconds()
				rates[p.name] = append(rates[p.name], p.rate)
				perCall[p.name] = append(perCall[p.name], us/float64(max(n, 1)))
			}
			for _, r := range peerRatios {
				rates[r.name] = append(rates[r.name], ps[r.num].rate/ps[r.den].rate)
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%d rounds; load %s; min / median / max over rounds\n", peerRounds, loadavg())
	for _, p := range ps {
		lo, med, hi := spread(rates[p.name])
		ulo, umed, uhi := spread(perCall[p.name])
		clo, cmed, chi := spread(clientCPU[p.name])
		fmt.Fprintf(&table, "%-14s %8.0f / %8.0f / %8.0f calls/s   server %5.1f / %5.1f / %5.1f µs a call   client CPU %5.1f / %5.1f / %5.1f µs a call\n",
			p.name, lo, med, hi, ulo, umed, uhi, clo, cmed, chi)
		b.ReportMetric(med, p.name+"-calls/s")
		b.ReportMetric(umed, p.name+"-server-µs/call")
		b.ReportMetric(cmed, p.name+"-client-cpu-µs/call")
	}
	for _, r := range peerRatios {
		lo, med, hi := spread(rates[r.name])
		fmt.Fprintf(&table, "%-22s %.3f / %.3f / %.3f\n", r.name, lo, med, hi)
		b.ReportMetric(med, r.name)
		b.ReportMetric(lo, r.name+"-min")
	}
	b.Log("\n" + table.String())
}

// peerRounds is how many rounds BenchmarkPeers runs per rule set.
const peerRounds = 12

// peerRatios are the paired ratios BenchmarkPeers reports, taken within
// each round, by index into its contenders.
var peerRatios = []struct {
	name     string
	num, den int
}{
	{"default/rate-1", 3, 1},
	{"default/rate-chained", 3, 2},
	{"exact/trivial", 4, 0},
	{"default/trivial", 3, 0},
}

// spread returns the least, median and greatest of x.
func spread(x []float64) (float64, float64, float64) {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}

// loadavg is /proc/loadavg's first three fields, or "unknown".
func loadavg() string {
	out, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(out))
	if len(f) < 3 {
		return "unknown"
	}
	return fmt.Sprintf("%s %s %s", f[0], f[1], f[2])
}

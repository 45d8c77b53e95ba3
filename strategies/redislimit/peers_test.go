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
// in alternating slices of 250 ms, one round per b.N, the order rotating:
//
//   - trivial: EVALSHA of "return 0", the floor;
//   - rate-1: redis_rate Allow on one rule (the first of the three);
//   - rate-chained: redis_rate Allow on each of the three rules in turn
//     (stopping at the first refusal, as a caller chaining it would);
//   - default: rlcheck's admission over the three rules, default policy;
//   - exact: the same with Options.Exact (three sorted sets).
//
// Two rule sets: never-bind (2^30 per 1s, 1m, 1h: every call admitted)
// and binding (10/s, 500/min, 10000/day, spread over peerKeys keys). It
// reports each rate, the medians over rounds of the paired ratios
// default/rate-1, default/rate-chained and exact/trivial, and the server's
// CPU per call (INFO commandstats, EVALSHA time per decision).
//
//	go test -run '^$' -bench Peers -benchtime 12x ./strategies/redislimit/
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
	rate float64 // in the current round
}

func benchPeers(b *testing.B, rules []rule.Rule, keys int) {
	s := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 2 * benchWorkers})
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
	ratios := map[string][]float64{}
	round := 0
	for b.Loop() {
		for i := range ps {
			p := ps[(i+round)%len(ps)]
			require.NoError(b, c.ConfigResetStat(ctx).Err())
			n, d := slice(b, p.call, 250*time.Millisecond)
			p.n += n
			p.d += d
			p.us += evalshaStat(b, c, "usec")
			p.rate = float64(n) / d.Seconds()
		}
		round++
		ratios["default/rate-1"] = append(ratios["default/rate-1"], ps[3].rate/ps[1].rate)
		ratios["default/rate-chained"] = append(ratios["default/rate-chained"], ps[3].rate/ps[2].rate)
		ratios["exact/trivial"] = append(ratios["exact/trivial"], ps[4].rate/ps[0].rate)
		ratios["default/trivial"] = append(ratios["default/trivial"], ps[3].rate/ps[0].rate)
	}
	for _, p := range ps {
		b.ReportMetric(float64(p.n)/p.d.Seconds(), p.name+"-calls/s")
		b.ReportMetric(p.us/float64(p.n), p.name+"-server-µs/call")
	}
	for name, x := range ratios {
		slices.Sort(x)
		b.ReportMetric(x[len(x)/2], name)
	}
	b.Logf("%d rounds; load %s", round, loadavg())
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

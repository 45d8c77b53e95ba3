package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// reserveCase is one seeded case of reservations: rules of every kind
// (exact and bucketed sliding, fixed, bucket; a call rule and cost
// rules), arrivals in whole µs with ties and gaps of a window, estimates
// within the caps, and per call its actual costs (below, at or above the
// estimates, or 0; nil: never settled) and the delay of its settlement (0:
// at its own instant).
type reserveCase struct {
	rules    []rule.Rule
	units    []string
	arrivals []int64 // µs after epoch, ascending
	est      [][]int64
	actual   [][]int64
	delay    []int64 // µs
}

func newReserveCase(seed uint64) reserveCase {
	r := rand.New(rand.NewPCG(seed, 0x5e771e))
	ms := time.Millisecond
	w := time.Duration(10+r.IntN(300)) * ms
	c := reserveCase{rules: []rule.Rule{{Limit: 2 + r.IntN(4), Window: w * time.Duration(1+r.IntN(2))}}}
	kinds := []string{"exact", "bucketed", "fixed", "bucket"}
	for _, k := range []string{kinds[r.IntN(4)], kinds[r.IntN(4)]} {
		n := 4 + r.IntN(12)
		rr := rule.Rule{Limit: n, Window: w * time.Duration(1+r.IntN(3)), Unit: []string{"tokens", "points"}[r.IntN(2)]}
		switch k {
		case "exact":
			rr.Buckets = -1
		case "bucketed":
			rr.Buckets = 2 + r.IntN(3)
		case "fixed":
			rr.Kind, rr.Offset = rule.Fixed, time.Duration(r.Int64N(int64(rr.Window)/1000))*time.Microsecond
		case "bucket":
			rr.Kind, rr.Burst = rule.Bucket, n+r.IntN(n)
		}
		if !slices.ContainsFunc(c.rules, func(o rule.Rule) bool { return o.Window == rr.Window && o.Unit == rr.Unit }) {
			c.rules = append(c.rules, rr)
		}
	}
	c.units = rule.Units(c.rules)
	wµs := int64(w / time.Microsecond)
	t := int64(0)
	for range 40 {
		switch r.IntN(5) {
		case 0:
		case 1:
			t += wµs
		default:
			t += r.Int64N(wµs)
		}
		c.arrivals = append(c.arrivals, t)
		est := make([]int64, len(c.units))
		for u, name := range c.units {
			est[u] = r.Int64N(unitCap(c.rules, name) + 1)
		}
		c.est = append(c.est, est)
		var actual []int64
		if way := r.IntN(5); way < 4 {
			actual = make([]int64, len(est))
			for u, e := range est {
				actual[u] = []int64{e / 2, e, e + 1 + r.Int64N(e+3), 0}[way]
			}
		}
		c.actual = append(c.actual, actual)
		c.delay = append(c.delay, []int64{0, wµs, r.Int64N(2 * wµs), r.Int64N(wµs)}[r.IntN(4)])
	}
	return c
}

// unitCap is the least cap of the rules metering unit.
func unitCap(rules []rule.Rule, unit string) int64 {
	n := int64(1 << 62)
	for _, r := range rules {
		if r.Unit == unit {
			n = min(n, kindCap(r))
		}
	}
	return n
}

// settling is a settlement due at at µs after epoch.
type settling struct {
	at  int64
	res *strategies.Reservation
	i   int
}

// settleRT is a stepRT whose sleeps pass through the settlements due on
// the way, each at its instant, before the sleeper wakes: the order a
// provider settles in (a settlement counts for the sends at its instant).
type settleRT struct {
	stepRT
	due    []settling
	settle func(s settling)
}

func (r *settleRT) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	to := r.t + int64(d)
	r.runDue(to)
	r.set(to)
	return nil
}

// runDue settles, in order, every settlement due by until.
func (r *settleRT) runDue(until int64) {
	for len(r.due) > 0 {
		i := 0
		for j, s := range r.due {
			if s.at < r.due[i].at {
				i = j
			}
		}
		s := r.due[i]
		if epoch+s.at*1000 > until {
			return
		}
		r.due = slices.Delete(r.due, i, i+1)
		if r.t < epoch+s.at*1000 {
			r.set(epoch + s.at*1000)
		}
		r.settle(s)
	}
}

// runReserve drives c through a limiter of source on c and returns the
// checker's violations of the sends as settled.
func runReserve(t *testing.T, c reserveCase, seed uint64, cl redis.Scripter, src TimeSource, onAdvance func(int64)) int64 {
	rt := &settleRT{stepRT: stepRT{t: epoch, onAdvance: onAdvance}}
	rt.set(epoch)
	l, err := New(cl, rt, c.rules, Options{Key: fmt.Sprintf("r%d-%v", seed, src), TimeSource: src, MemberPrefix: "p:", MaxSkew: -1})
	require.NoError(t, err)
	at := make([]int64, len(c.arrivals)) // ns: fixed windows lie on the Unix epoch's grid
	settled := make([]*checker.Settlement, len(c.arrivals))
	rt.settle = func(s settling) {
		require.NoError(t, s.res.Settle(c.actual[s.i]))
		require.NoError(t, s.res.Settle(c.est[s.i]), "a retry changes nothing")
		settled[s.i] = &checker.Settlement{At: rt.t, Actual: c.actual[s.i]}
	}
	for i, a := range c.arrivals {
		rt.runDue(epoch + a*1000)
		if rt.t < epoch+a*1000 {
			rt.set(epoch + a*1000)
		}
		res, err := l.Reserve(context.Background(), c.est[i])
		require.NoError(t, err)
		at[i] = res.At()
		if c.actual[i] != nil {
			rt.due = append(rt.due, settling{at: (at[i]-epoch)/1000 + c.delay[i], res: res, i: i})
			rt.runDue(rt.t)
		}
	}
	rt.runDue(1 << 62)
	ch := checker.New(checker.Config{Rules: c.rules, Units: c.units})
	for i := range at {
		require.NoError(t, ch.ObserveReserved(at[i], int64(i), c.est[i], settled[i]))
	}
	rep := ch.Report()
	return rep.Violations()
}

// seeds is n, or full under RLCHECK_FULL=1.
func seeds(n, full uint64) uint64 { return testrun.Seeds(n, full) }

// reserveProperty: on seeds cases, every time source keeps every window
// with reservations settled as drawn.
func reserveProperty(t *testing.T, seeds uint64, sources map[string]func(t *testing.T) (redis.Scripter, func(int64))) {
	for seed := range seeds {
		c := newReserveCase(seed)
		for name, start := range sources {
			cl, onAdvance := start(t)
			for _, src := range []TimeSource{Server, Client, Virtual} {
				if src == Server && onAdvance == nil {
					continue // a real server's TIME cannot be stepped
				}
				require.Zero(t, runReserve(t, c, seed, cl, src, onAdvance), "seed %d %s %v: %v", seed, name, src, c.rules)
			}
		}
	}
}

// TestReservationsKeepEveryWindow: on miniredis, under each time source,
// no window of any kind is ever overfilled by sends whose estimates are
// settled below, at or above themselves, to 0, at their own instant, a
// window later or never, as the checker judges reserved costs.
func TestReservationsKeepEveryWindow(t *testing.T) {
	t.Parallel()
	reserveProperty(t, seeds(5, 200), map[string]func(t *testing.T) (redis.Scripter, func(int64)){
		"miniredis": func(t *testing.T) (redis.Scripter, func(int64)) {
			m, c := newMini(t)
			return c, func(now int64) { m.SetTime(time.Unix(0, now)) }
		},
	})
}

// TestRealReservationsKeepEveryWindow is the same on a real server, under
// the caller's and virtual time.
func TestRealReservationsKeepEveryWindow(t *testing.T) {
	t.Parallel()
	c := realClient(t, redistest.Start(t))
	reserveProperty(t, seeds(12, 1000), map[string]func(t *testing.T) (redis.Scripter, func(int64)){
		"redis-server": func(t *testing.T) (redis.Scripter, func(int64)) { return c, nil },
	})
}

package redislimit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// costWork is one seeded weighted case: call and cost rules, arrivals in
// whole microseconds (ties and gaps of exactly a window included), and
// each call's costs in the units of rule.Units(rules).
type costWork struct {
	rules    []rule.Rule
	arrivals []int64 // ns after epoch, ascending
	costs    [][]int64
}

func newCostWork(seed uint64, buckets bool) costWork {
	r := rand.New(rand.NewPCG(seed, 0xc057))
	var w costWork
	units := []string{"", "tokens", "bytes"}
	for range 1 + r.IntN(4) {
		ru := rule.Rule{Window: time.Duration(1+r.IntN(2000)) * time.Millisecond, Unit: units[r.IntN(len(units))]}
		ru.Limit = 1 + r.IntN(5)
		if ru.Unit != "" {
			ru.Limit = 1 + r.IntN(20)
		}
		if buckets {
			ru.Buckets = 1 + r.IntN(5)
		}
		w.rules = append(w.rules, ru)
	}
	names := rule.Units(w.rules)
	t := int64(0)
	for range 20 + r.IntN(30) {
		switch r.IntN(5) {
		case 0: // a tie
		case 1: // exactly one window later
			t += int64(w.rules[r.IntN(len(w.rules))].Window)
		default:
			t += int64(r.IntN(300_000)) * 1000
		}
		w.arrivals = append(w.arrivals, t)
		costs := make([]int64, len(names))
		for u, name := range names {
			var n int64 // the limit of some rule of the unit
			for _, ru := range w.rules {
				if ru.Unit == name && (n == 0 || r.IntN(2) == 0) {
					n = int64(ru.Limit)
				}
			}
			costs[u] = []int64{0, 1, n, n + 1, r.Int64N(n + 1), r.Int64N(n + 1)}[r.IntN(6)]
		}
		w.costs = append(w.costs, costs)
	}
	return w
}

// charge is what rule ru charges a call of costs.
func (w costWork) charge(ru rule.Rule, costs []int64) int64 {
	for u, name := range rule.Units(w.rules) {
		if name == ru.Unit {
			return costs[u]
		}
	}
	return 1
}

// admits says whether a call of costs may go at t after sends (instants
// and costs): in every rule, what the earlier sends in (t - W, t] were
// charged plus the call's charge stays within the limit.
func (w costWork) admits(t int64, sends []int64, sent [][]int64, costs []int64) bool {
	for _, ru := range w.rules {
		sum := w.charge(ru, costs)
		for j, s := range sends {
			if s > t-int64(ru.Window) && s <= t {
				sum += w.charge(ru, sent[j])
			}
		}
		if sum > int64(ru.Limit) {
			return false
		}
	}
	return true
}

// oneOverLimit says whether some rule refuses costs on their own.
func (w costWork) oneOverLimit(costs []int64) bool {
	for _, ru := range w.rules {
		if w.charge(ru, costs) > int64(ru.Limit) {
			return true
		}
	}
	return false
}

// reference is the brute-force weighted sliding log for one caller: a
// call goes at the first instant, from its arrival and the previous send
// on, among that one and each earlier send plus a window, that admits it;
// a call over a limit on its own is refused (-1).
func (w costWork) reference() []int64 {
	var sends []int64
	var sent [][]int64
	var out []int64
	for i, a := range w.arrivals {
		if w.oneOverLimit(w.costs[i]) {
			out = append(out, -1)
			continue
		}
		ready := a
		if n := len(sends); n > 0 {
			ready = max(ready, sends[n-1])
		}
		best := int64(-1)
		for _, c := range w.candidates(ready, sends) {
			if (best < 0 || c < best) && w.admits(c, sends, sent, w.costs[i]) {
				best = c
			}
		}
		sends, sent = append(sends, best), append(sent, w.costs[i])
		out = append(out, best)
	}
	return out
}

func (w costWork) candidates(ready int64, sends []int64) []int64 {
	c := []int64{ready}
	for _, s := range sends {
		for _, ru := range w.rules {
			if x := s + int64(ru.Window); x > ready {
				c = append(c, x)
			}
		}
	}
	return c
}

// violations counts, by brute force, the sends (s, a send instant or -1
// for a refused call) that overfill a rule.
func (w costWork) violations(out []int64) int {
	var sends []int64
	var sent [][]int64
	n := 0
	for i, s := range out {
		if s < 0 {
			continue
		}
		if !w.admits(s, sends, sent, w.costs[i]) {
			n++
		}
		sends, sent = append(sends, s), append(sent, w.costs[i])
	}
	return n
}

// drive sends the calls through l on rt, one caller, and returns the send
// instants, -1 for a call refused with a *strategies.CostError.
func (w costWork) drive(t *testing.T, rt *stepRT, l *Limiter) []int64 {
	t.Helper()
	var out []int64
	for i, a := range w.arrivals {
		if rt.t < epoch+a {
			rt.set(epoch + a)
		}
		err := l.AcquireCost(context.Background(), w.costs[i])
		var ce *strategies.CostError
		if errors.As(err, &ce) {
			out = append(out, -1)
			continue
		}
		require.NoError(t, err)
		out = append(out, rt.t-epoch)
	}
	return out
}

// costClient is a client on a source's clock: miniredis, whose TIME
// follows rt, for Server; else the given one.
type costClient func(t *testing.T, src TimeSource, rt *stepRT) redis.Scripter

func miniClients(t *testing.T, src TimeSource, rt *stepRT) redis.Scripter {
	m, c := newMini(t)
	if src == Server {
		rt.onAdvance = func(now int64) { m.SetTime(time.Unix(0, now)) }
		rt.set(rt.t)
	}
	return c
}

func checkCosts(t *testing.T, clients costClient, sources []TimeSource, seeds uint64) {
	for seed := range seeds {
		w := newCostWork(seed, false)
		want := w.reference()
		require.Zero(t, w.violations(want), "seed %d: the reference breaks its rules", seed)
		for _, src := range sources {
			rt := &stepRT{t: epoch}
			c := clients(t, src, rt)
			l, err := New(c, rt, w.rules, Options{Key: fmt.Sprintf("c%d-%v", seed, src), TimeSource: src, MemberPrefix: "p:", MaxSkew: -1, Exact: true})
			require.NoError(t, err)
			got := w.drive(t, rt, l)
			require.Equal(t, want, got, "seed %d %v rules %v costs %v: exact rules against the reference", seed, src, w.rules, w.costs)
		}
		w = newCostWork(seed, true)
		for _, src := range sources {
			rt := &stepRT{t: epoch}
			l, err := New(clients(t, src, rt), rt, w.rules, Options{Key: fmt.Sprintf("b%d-%v", seed, src), TimeSource: src, MemberPrefix: "p:", MaxSkew: -1})
			require.NoError(t, err)
			got := w.drive(t, rt, l)
			require.Zero(t, w.violations(got), "seed %d %v rules %v: bucketed rules overfill", seed, src, w.rules)
			for i, s := range got {
				require.Equal(t, w.oneOverLimit(w.costs[i]), s < 0, "seed %d call %d: refused at once exactly when over a limit", seed, i)
			}
		}
	}
}

// TestCostsMatchReference: on the embedded server, under every time
// source, exact weighted rules send when the brute-force oracle does, to
// the µs, and bucketed ones never overfill a window.
func TestCostsMatchReference(t *testing.T) {
	t.Parallel()
	checkCosts(t, miniClients, []TimeSource{Server, Client, Virtual}, seeds(12, 40))
}

// TestRealCostsMatchReference is the same on a real redis-server, whose
// TIME cannot be stepped: the caller's clocks only.
func TestRealCostsMatchReference(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := realClient(t, s)
	checkCosts(t, func(*testing.T, TimeSource, *stepRT) redis.Scripter { return c }, []TimeSource{Client, Virtual}, seeds(12, 40))
}

// TestCostOverLimitRefusedAtOnce: a call costing more than a rule's limit
// fails with a *strategies.CostError naming the rule, recording nothing.
func TestCostOverLimitRefusedAtOnce(t *testing.T) {
	_, c := newMini(t)
	rt := &stepRT{t: epoch}
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 100, Window: time.Second, Unit: "tokens"}}
	l, err := New(c, rt, rules, Options{Key: "over", TimeSource: Virtual, MemberPrefix: "p:"})
	require.NoError(t, err)
	err = l.AcquireCost(context.Background(), []int64{101})
	var ce *strategies.CostError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, rules[1], ce.Rule)
	require.Zero(t, l.Runs())
	require.ErrorAs(t, l.AcquireCost(context.Background(), []int64{1, 2}), &ce)
	require.NoError(t, l.AcquireCost(context.Background(), []int64{100}))
}

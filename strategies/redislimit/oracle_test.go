package redislimit

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// The differential property: the script, driven with random request
// instants and costs, admits sends that a brute-force oracle, written
// here from the definitions of docs/semantics.md and sharing no code with
// the checker or the in-memory books, finds breaking no rule. The Redis
// limiter keeps sliding rules (exact or bucketed), fixed rules and token
// buckets, counting calls or costs; it refuses first-call rules and a
// time zone's days (TestNewRefusesKinds), so the oracle judges the three.

// oSend is an admitted send: its instant in ns and its cost per unit.
type oSend struct {
	t     int64
	costs map[string]int64
}

// costIn is what s costs in a rule of unit u: 1 for a call rule.
func (s oSend) costIn(u string) int64 {
	if u == "" {
		return 1
	}
	return s.costs[u]
}

// oracleViolations returns, for sends in time order (ties in the order
// admitted), a description of every send that breaks one of rules, as
// semantics.md defines each kind. Sums stay in int64: at most a few
// hundred sends of costs at most 100 each.
func oracleViolations(rules []rule.Rule, sends []oSend) []string {
	var out []string
	for _, r := range rules {
		var bad []int
		switch r.Kind {
		case rule.Sliding:
			bad = slidingViolations(r, sends)
		case rule.Fixed:
			bad = fixedViolations(r, sends)
		case rule.Bucket:
			bad = bucketViolations(r, sends)
		default:
			panic("oracle: no definition for kind " + r.Kind.String())
		}
		for _, i := range bad {
			out = append(out, fmt.Sprintf("%v: send %d at %d ns", r, i, sends[i].t))
		}
	}
	return out
}

// slidingViolations: send i breaks N/W when the cost of the earlier sends
// in (t_i - W, t_i] plus its own exceeds N.
func slidingViolations(r rule.Rule, sends []oSend) []int {
	var bad []int
	for i, s := range sends {
		sum := s.costIn(r.Unit)
		for j := range i {
			if sends[j].t > s.t-int64(r.Window) {
				sum += sends[j].costIn(r.Unit)
			}
		}
		if sum > int64(r.Limit) {
			bad = append(bad, i)
		}
	}
	return bad
}

// fixedViolations: the windows are [k*W + o, (k+1)*W + o); send i breaks
// the rule when the cost of the earlier sends of its window plus its own
// exceeds N.
func fixedViolations(r rule.Rule, sends []oSend) []int {
	window := func(t int64) int64 {
		x, w := t-int64(r.Offset), int64(r.Window)
		k := x / w
		if x%w != 0 && x < 0 {
			k--
		}
		return k
	}
	var bad []int
	for i, s := range sends {
		sum := s.costIn(r.Unit)
		for j := range i {
			if window(sends[j].t) == window(s.t) {
				sum += sends[j].costIn(r.Unit)
			}
		}
		if sum > int64(r.Limit) {
			bad = append(bad, i)
		}
	}
	return bad
}

// bucketViolations: capacity B, refilled at N per W, full at the first
// send; the level is kept times W in ns, exactly. Before send i it is
// min(B*W, level + N*(t_i - t_prev)); the send breaks the rule when its
// cost times W exceeds that, and then takes nothing. The refill is
// reckoned on at most B*W ns (the bucket is full by then), so every
// product stays below 100 * 100 * 10^10 ns, far inside int64.
func bucketViolations(r rule.Rule, sends []oSend) []int {
	w, n, full := int64(r.Window), int64(r.Limit), int64(r.Burst)*int64(r.Window)
	level, prev := full, int64(0)
	var bad []int
	for i, s := range sends {
		if i > 0 {
			level = min(full, level+n*min(s.t-prev, full))
		}
		prev = s.t
		if need := s.costIn(r.Unit) * w; need > level {
			bad = append(bad, i)
		} else {
			level -= need
		}
	}
	return bad
}

// TestOracleCatchesViolations guards the oracle: a bucket of 1/1s burst 1
// admitting 1 µs early, 4 calls in one window of 3/1s fixed (a corrupt
// negative count) and a sliding window overfilled by 1 ns are
// caught, and the same sends 1 ns later are not.
func TestOracleCatchesViolations(t *testing.T) {
	calls := func(ts ...int64) []oSend {
		out := make([]oSend, len(ts))
		for i, x := range ts {
			out[i] = oSend{t: x}
		}
		return out
	}
	sec := int64(time.Second)
	for _, tc := range []struct {
		rules string
		bad   []int64
		good  []int64
	}{
		{"1/1s burst 1", []int64{999, sec + 998}, []int64{999, sec + 999}},
		{"2/1s burst 4", []int64{0, 0, 0, 0, 4 * sec / 10}, []int64{0, 0, 0, 0, sec / 2}},
		{"3/1s fixed", []int64{0, 1, 2, sec - 1}, []int64{0, 1, 2, sec}},
		{"3/1s fixed at 500ms", []int64{sec / 2, sec / 2, sec / 2, 3*sec/2 - 1}, []int64{sec / 2, sec / 2, sec / 2, 3 * sec / 2}},
		{"2/1s", []int64{5, 6, sec + 4}, []int64{5, 6, sec + 5}},
	} {
		rules, err := rule.ParseList(tc.rules)
		require.NoError(t, err)
		assert.Len(t, oracleViolations(rules, calls(tc.bad...)), 1, "%s %v", tc.rules, tc.bad)
		assert.Empty(t, oracleViolations(rules, calls(tc.good...)), "%s %v", tc.rules, tc.good)
	}
	tokens := []oSend{{t: 0, costs: map[string]int64{"tokens": 7}}, {t: 10, costs: map[string]int64{"tokens": 4}}}
	assert.Len(t, oracleViolations([]rule.Rule{{Limit: 10, Unit: "tokens", Window: time.Second}}, tokens), 1)
	tokens[1].costs["tokens"] = 3
	assert.Empty(t, oracleViolations([]rule.Rule{{Limit: 10, Unit: "tokens", Window: time.Second}}, tokens))
}

// oracleWork is one seeded case: a contract the oracle judges, the
// margin the limiters keep on top of it, and calls of workers (each a
// process with a limiter of its own, all on one key) in arrival order.
type oracleWork struct {
	contract []rule.Rule
	margin   time.Duration
	workers  int
	calls    []oCall
}

// oCall is a call arriving at at (ns) at worker, costing costs per unit.
type oCall struct {
	at     int64
	worker int
	costs  map[string]int64
}

// oracleRule draws a rule of any kind the script keeps, counting calls or
// (unit "tokens") costs; windows of sliding and bucket rules with
// nanoseconds the script rounds up, of fixed rules in whole microseconds
// (New refuses others).
func oracleRule(r *rand.Rand, unit string) rule.Rule {
	scale := 1
	if unit != "" {
		scale = 10
	}
	ms, us := int64(time.Millisecond), int64(time.Microsecond)
	switch r.IntN(4) {
	case 0, 1:
		ru := rule.Rule{Limit: scale * (1 + r.IntN(6)), Unit: unit, Window: time.Duration(ms + r.Int64N(2000*ms))}
		ru.Buckets = []int{0, rule.Exact, 1 + r.IntN(8)}[r.IntN(3)]
		return ru
	case 2:
		w := (1+r.Int64N(1500))*ms + r.Int64N(1000)*us
		return rule.Rule{Limit: scale * (1 + r.IntN(5)), Unit: unit, Window: time.Duration(w), Kind: rule.Fixed,
			Offset: time.Duration(r.Int64N(w/us) * us)}
	}
	return rule.Rule{Limit: 1 + r.IntN(4), Unit: unit, Window: time.Duration(ms + r.Int64N(1000*ms)), Kind: rule.Bucket,
		Burst: scale * (1 + r.IntN(6))}
}

// newOracleWork draws a case: one to three rules, calls and costs mixed,
// a margin when every kind leaves room for it, and arrivals with ties,
// gaps of exactly a window and a window plus or minus 1 ns, gaps below a
// microsecond, and instants 1 ns either side of a fixed window's edge.
func newOracleWork(seed uint64) oracleWork {
	r := rand.New(rand.NewPCG(seed, 0x0ac1e))
	var w oracleWork
	for range 1 + r.IntN(3) {
		w.contract = append(w.contract, oracleRule(r, []string{"", "", "tokens"}[r.IntN(3)]))
	}
	if r.IntN(3) == 0 {
		w.margin = time.Duration(r.Int64N(int64(2 * time.Millisecond)))
		for _, ru := range strategies.Widen(w.margin, w.contract...) {
			if CheckKind(ru) != nil {
				w.margin = 0
			}
		}
	}
	w.workers = 1 + r.IntN(3)
	t := epoch + r.Int64N(int64(time.Second))
	for range 30 + r.IntN(40) {
		t += oracleGap(r, w.contract, t)
		c := oCall{at: t, worker: r.IntN(w.workers), costs: map[string]int64{"tokens": r.Int64N(12)}}
		if r.IntN(10) == 0 {
			c.costs["tokens"] = 0
		}
		w.calls = append(w.calls, c)
	}
	return w
}

// oracleGap draws the gap before the next arrival at t.
func oracleGap(r *rand.Rand, rules []rule.Rule, t int64) int64 {
	ru := rules[r.IntN(len(rules))]
	win := int64(ru.Window)
	switch r.IntN(8) {
	case 0:
		return 0
	case 1:
		return win
	case 2:
		return win - 1
	case 3:
		return win + 1
	case 4:
		return r.Int64N(1000)
	case 5:
		if ru.Kind == rule.Fixed { // 1 ns before or at the next edge
			x := t - int64(ru.Offset)
			return win - ((x%win)+win)%win - r.Int64N(2)
		}
		return win / int64(ru.Limit)
	}
	return r.Int64N(300 * int64(time.Millisecond))
}

// oracleClock sets every clock a time source reads to an instant (ns):
// the runtime's for Client, Options.Now's for Virtual, the server's TIME
// for Server.
type oracleClock struct {
	rt      *stepRT
	virtual int64
	server  *miniredis.Miniredis
}

func (c *oracleClock) set(t int64) {
	c.rt.t, c.virtual = t, t
	if c.server != nil {
		c.server.SetTime(time.Unix(0, t))
	}
}

// oEvent is a try of call i at instant at; seq orders ties by arrival.
type oEvent struct {
	at       int64
	seq, i   int
	member   string
	sweep    bool
	retries  int
	costArgs []any
}

type oQueue []oEvent

func (q oQueue) Len() int { return len(q) }
func (q oQueue) Less(i, j int) bool {
	return cmp.Or(cmp.Compare(q[i].at, q[j].at), cmp.Compare(q[i].seq, q[j].seq)) < 0
}
func (q oQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *oQueue) Push(x any)   { *q = append(*q, x.(oEvent)) }
func (q *oQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// oracleLimiters builds one limiter per worker on key, as separate
// processes would.
func oracleLimiters(t *testing.T, c redis.Scripter, w oracleWork, src TimeSource, clk *oracleClock, key string) []*Limiter {
	t.Helper()
	kept := strategies.Widen(w.margin, w.contract...)
	var ls []*Limiter
	for i := range w.workers {
		l, err := New(c, clk.rt, kept, Options{Key: key, TimeSource: src, MaxSkew: -1, MemberPrefix: fmt.Sprintf("w%d:", i),
			Now: func() int64 { return clk.virtual }, InProcess: true})
		require.NoError(t, err)
		ls = append(ls, l)
	}
	return ls
}

// driveOracle sends w's calls through the limiters, each call trying at
// its arrival and again after every wait the script asks for, in time
// order, as Acquire does; it returns the admitted sends (the caller's
// instant in ns, or under Server time the instant TIME gave the record)
// and how many tries waited. A call no wait can admit (a cost above a
// rule's limit) is refused at once and never sent.
func driveOracle(t *testing.T, w oracleWork, ls []*Limiter, clk *oracleClock, src TimeSource) ([]oSend, int) {
	t.Helper()
	q := &oQueue{}
	for i, c := range w.calls {
		l := ls[c.worker]
		costs := make([]int64, len(l.units))
		for u, name := range l.units {
			costs[u] = c.costs[name]
		}
		if l.checkCosts(costs) != nil {
			continue
		}
		n := l.counter.Add(1)
		member, tail := l.prefix+strconv.FormatUint(n, 10), []any(nil)
		if len(l.units) > 0 {
			member, tail = l.costArgs(member, costs)
		}
		heap.Push(q, oEvent{at: c.at, seq: i, i: i, member: member, sweep: n%sweepEvery == 0, costArgs: tail})
	}
	var sends []oSend
	waited := 0
	for q.Len() > 0 {
		e := heap.Pop(q).(oEvent)
		clk.set(e.at)
		wait, at, _, err := ls[w.calls[e.i].worker].tryCost(context.Background(), e.member, e.sweep, e.costArgs)
		require.NoError(t, err, "call %d at %d", e.i, e.at)
		if wait == 0 {
			sent := e.at
			if src == Server {
				sent = at
			}
			sends = append(sends, oSend{t: sent, costs: w.calls[e.i].costs})
			continue
		}
		waited++
		require.Positive(t, wait)
		require.Less(t, e.retries, 100, "call %d still waiting", e.i)
		e.at, e.retries = e.at+int64(wait), e.retries+1
		heap.Push(q, e)
	}
	slices.SortStableFunc(sends, func(a, b oSend) int { return cmp.Compare(a.t, b.t) })
	return sends, waited
}

// oracleSeeds is how many cases a test of a server and time source runs:
// n every day (the tests take a few seconds in all), 50 times as many with
// RLCHECK_FULL=1.
func oracleSeeds(n int) int {
	if testrun.Full() {
		return 50 * n
	}
	return n
}

// checkAgainstOracle drives oracleSeeds(seeds) cases on c under each time
// source (Server only with m, whose TIME the test sets) and requires the
// oracle to find no violation of the contract among the admitted sends.
func checkAgainstOracle(t *testing.T, c redis.Scripter, m *miniredis.Miniredis, sources []TimeSource, seeds int) {
	waited := 0
	for seed := range uint64(oracleSeeds(seeds)) {
		w := newOracleWork(seed)
		for _, src := range sources {
			clk := &oracleClock{rt: &stepRT{}}
			if src == Server {
				clk.server = m
			}
			key := fmt.Sprintf("oracle-%d-%v", seed, src)
			sends, n := driveOracle(t, w, oracleLimiters(t, c, w, src, clk, key), clk, src)
			waited += n
			require.Empty(t, oracleViolations(w.contract, sends), "seed %d %v: contract %v, margin %v, %d workers",
				seed, src, w.contract, w.margin, w.workers)
		}
	}
	assert.Positive(t, waited, "no call ever waited: the cases never bind")
}

// TestAgainstOracle: on a real redis-server with the caller's clocks (its
// TIME cannot be set), and on miniredis with every time source, a few
// cases (it builds a Lua state per run); the embedded server's fast path
// runs many more, with every time source, in TestEmbeddedAgainstOracle.
func TestAgainstOracle(t *testing.T) {
	t.Parallel()
	m, c := newMini(t)
	t.Run("miniredis", func(t *testing.T) { checkAgainstOracle(t, c, m, []TimeSource{Server, Client, Virtual}, 2) })
	if redistest.Available(t) {
		real := realClient(t, redistest.Start(t))
		t.Run("redis-server", func(t *testing.T) { checkAgainstOracle(t, real, nil, []TimeSource{Client, Virtual}, 25) })
	}
}

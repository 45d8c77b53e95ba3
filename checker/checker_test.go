package checker

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

// oracle is the O(n²) reading of the definition for one rule.
type oracle struct {
	viol  []int // sends with N or more earlier sends in their window
	count []int // per send, the sends in its window up to and including it
	max   int   // the most sends in any window [t, t+W) ([t, t+W] closed)
}

// bruteForce reads the definition literally: send i violates N/W when N or
// more earlier sends lie in (t_i-W, t_i] (closed: [t_i-W, t_i]), and a
// window [t, t+W) holds at most max sends.
func bruteForce(ts []int64, r rule.Rule, b rule.Boundary) oracle {
	w := r.Window
	o := oracle{count: make([]int, len(ts))}
	for i := range ts {
		earlier := 0
		for j := 0; j < i; j++ {
			if b.Within(time.Duration(ts[i]-ts[j]), w) {
				earlier++
			}
		}
		o.count[i] = earlier + 1
		if earlier >= r.Limit {
			o.viol = append(o.viol, i)
		}
		in := 0
		for j := i; j < len(ts); j++ {
			if b.Within(time.Duration(ts[j]-ts[i]), w) {
				in++
			}
		}
		o.max = max(o.max, in)
	}
	return o
}

// randomLog makes sorted times on a coarse grid, so equal times and gaps of
// exactly one window are common.
func randomLog(rng *rand.Rand, n int, grid int64) []int64 {
	ts := make([]int64, n)
	var t int64
	for i := range ts {
		switch rng.IntN(4) {
		case 0: // same instant as the previous send
		case 1:
			t += grid * int64(rng.IntN(3))
		default:
			t += int64(rng.IntN(int(grid) * 2))
		}
		ts[i] = t
	}
	return ts
}

// indexes returns 0..n-1, the refs Check gives.
func indexes(n int) []int64 {
	refs := make([]int64, n)
	for i := range refs {
		refs[i] = int64(i)
	}
	return refs
}

// checkOracle runs cfg over ts and holds every rule's verdict to the
// brute-force oracle: exact violations (each one, its count, the first),
// and the largest occupancy exact unless marked a lower bound.
func checkOracle(t *testing.T, ts []int64, cfg Config) Report {
	t.Helper()
	got := make([][]Violation, len(cfg.Rules))
	cfg.OnViolation = func(r int, v Violation) { got[r] = append(got[r], v) }
	rep, err := Check(ts, cfg)
	require.NoError(t, err)
	for k, r := range cfg.Rules {
		what := fmt.Sprintf("%v %v MaxTrack %d on %v", r, cfg.Boundary, cfg.MaxTrack, ts)
		want := bruteForce(ts, r, cfg.Boundary)
		rr := rep.Rules[k]
		idx := make([]int, len(got[k]))
		for i, v := range got[k] {
			idx[i] = int(v.Index)
			if v.CountSaturated {
				require.LessOrEqual(t, v.Count, int64(want.count[v.Index]), "%s: saturated count of send %d", what, v.Index)
				require.GreaterOrEqual(t, v.Count, int64(r.Limit+1), "%s: saturated count of send %d", what, v.Index)
			} else {
				require.Equal(t, int64(want.count[v.Index]), v.Count, "%s: count of send %d", what, v.Index)
			}
		}
		require.Equal(t, want.viol, nilIfEmpty(idx), "%s: violations", what)
		require.Equal(t, int64(len(want.viol)), rr.Violations, "%s: violation count", what)
		if rr.MaxSaturated {
			require.LessOrEqual(t, rr.MaxInWindow, int64(want.max), "%s: saturated max", what)
			require.GreaterOrEqual(t, rr.MaxInWindow, int64(r.Limit+1), "%s: saturated max", what)
		} else {
			require.Equal(t, int64(want.max), rr.MaxInWindow, "%s: max in window", what)
		}
		if len(want.viol) == 0 {
			require.Nil(t, rr.First, "%s: first violation", what)
		} else {
			require.NotNil(t, rr.First, "%s: first violation", what)
			require.Equal(t, int64(want.viol[0]), rr.First.Index, "%s: first violation", what)
		}
	}
	return rep
}

func nilIfEmpty(s []int) []int {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		grid := int64(1 + rng.IntN(5))
		ts := randomLog(rng, 1+rng.IntN(60), grid)
		rules := []rule.Rule{
			{Limit: 1 + rng.IntN(6), Window: time.Duration(grid * int64(1+rng.IntN(4)))},
			{Limit: 1 + rng.IntN(12), Window: time.Duration(grid * int64(1+rng.IntN(10)))},
		}
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			// A small MaxTrack exercises the saturated path too.
			maxTrack := 0
			if iter%3 == 0 {
				maxTrack = 1
			}
			checkOracle(t, ts, Config{Rules: rules, Boundary: b, MaxTrack: maxTrack})
		}
	}
}

// TestManyRulesAgainstBruteForce checks several rules in the one pass over
// the shared history: limits orders of magnitude apart (some beyond any
// log), ties and gaps of exactly one window, both boundaries, bounds that
// saturate. Each rule's report must also be the one it gets checked alone,
// whatever else shares the history.
func TestManyRulesAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	limits := []func() int{
		func() int { return 1 + rng.IntN(3) },
		func() int { return 5 + rng.IntN(20) },
		func() int { return 50 + rng.IntN(150) },
		func() int { return 1 << 31 },
		func() int { return math.MaxInt64 },
	}
	for iter := range 150 {
		grid := int64(1 + rng.IntN(4))
		ts := randomLog(rng, 1+rng.IntN(300), grid)
		var rules []rule.Rule
		for range 2 + rng.IntN(4) {
			rules = append(rules, rule.Rule{
				Limit:  limits[rng.IntN(len(limits))](),
				Window: time.Duration(grid * int64(1+rng.IntN(100))),
			})
		}
		maxTrack := []int{0, 0, 1, 3, 40}[iter%5]
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			cfg := Config{Rules: rules, Boundary: b, MaxTrack: maxTrack, List: 2}
			rep := checkOracle(t, ts, cfg)
			for k, r := range rules {
				alone, err := Check(ts, Config{Rules: []rule.Rule{r}, Boundary: b, MaxTrack: maxTrack, List: 2})
				require.NoError(t, err)
				require.Equal(t, alone.Rules[0], rep.Rules[k], "%v %v MaxTrack %d among %v on %v", r, b, maxTrack, rules, ts)
			}
		}
	}
}

// TestHugeLimits: a limit no log reaches gives a verdict with no violation
// and the exact largest window, in memory that follows that window, on both
// paths (Observe and ObserveBatch). Before the shared, growing history,
// 2^31 asked for 32 GiB up front and MaxInt64 indexed out of range.
func TestHugeLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	logs := map[string][]int64{
		"asyncio-sequential.txt": fixtures.MustTimes(t, "asyncio-sequential.txt"),
		"asyncio-combined.txt":   fixtures.MustTimes(t, "asyncio-combined.txt"),
		"random":                 randomLog(rng, 3000, int64(time.Millisecond)), // about 1000 in a second
	}
	for _, limit := range []int{1 << 31, math.MaxInt32, math.MaxInt64, math.MaxInt64 - 1, 1 << 62, 1<<62 - 1, 1<<62 + 1} {
		for name, ts := range logs {
			for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
				for _, track := range []int{0, math.MaxInt} {
					r := rule.Rule{Limit: limit, Window: time.Second}
					what := fmt.Sprintf("%v %v MaxTrack %d on %s", r, b, track, name)
					want := bruteForce(ts, r, b)
					cfg := Config{Rules: []rule.Rule{r}, Boundary: b, MaxTrack: track, List: 1}

					one, err := Check(ts, cfg)
					require.NoError(t, err, what)
					c := New(cfg)
					require.NoError(t, c.ObserveBatch(ts, indexes(len(ts))), what)
					batch := c.Report()
					assert.Equal(t, one, batch, "%s: ObserveBatch differs from Observe", what)

					rr := batch.Rules[0]
					assert.Zero(t, rr.Violations, what)
					assert.Nil(t, rr.First, what)
					assert.False(t, rr.MaxSaturated, what)
					assert.Equal(t, int64(want.max), rr.MaxInWindow, "%s: max in window", what)
					assert.LessOrEqual(t, len(c.hist.at), max(8, 2*(want.max+1)), "%s: history for a window of %d sends", what, want.max)
				}
			}
		}
	}
}

// TestHugeLimitFixture is `rlcheck check --rules 9223372036854775807/1s`
// on a recorded fixture, as the command hands it to the checker.
func TestHugeLimitFixture(t *testing.T) {
	r, err := rule.Parse("9223372036854775807/1s")
	require.NoError(t, err)
	ts := fixtures.MustTimes(t, "asyncio-sequential.txt")
	c := New(Config{Rules: []rule.Rule{r, {Limit: 5, Window: time.Second}}})
	require.NoError(t, c.ObserveBatch(ts, indexes(len(ts))))
	rep := c.Report()
	assert.Equal(t, int64(30), rep.Sends)
	assert.Zero(t, rep.Rules[0].Violations)
	assert.Equal(t, int64(7), rep.Rules[0].MaxInWindow, "the fixture's fullest second: 5/1s and its 2 violations")
	assert.Equal(t, int64(2), rep.Rules[1].Violations, "5/1s beside it")
}

// TestHistoryGrowsWithSends: the shared history doubles with the sends
// seen while a rule may still need them, and stops at what the rules need:
// one more than the fullest window seen, whatever the limits.
func TestHistoryGrowsWithSends(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rules []rule.Rule
		sends int
		want  int // len of the history after the sends
	}{
		{"limit beyond the log", []rule.Rule{{Limit: 1 << 31, Window: time.Hour}}, 1000, 1024},
		{"limit beyond the log, one send per window", []rule.Rule{{Limit: math.MaxInt64, Window: time.Nanosecond}}, 5000, 8},
		{"small limit, one send per window", []rule.Rule{{Limit: 10, Window: time.Nanosecond}}, 100000, 8},
		{"small limit, 100 sends per window", []rule.Rule{{Limit: 10, Window: 100}}, 100000, 128},
		{"small and huge limits", []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 1 << 40, Window: time.Second}}, 3000, 4096},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := New(Config{Rules: tt.rules})
			for i := range tt.sends {
				require.NoError(t, c.Observe(int64(i), int64(i)))
				n := len(c.hist.at)
				require.Equal(t, 0, n&(n-1), "a power of two")
				require.LessOrEqual(t, n, max(8, 2*(i+1)), "after %d sends", i+1)
			}
			assert.Equal(t, tt.want, len(c.hist.at))
		})
	}
}

// TestMaxInWindowBound: sends at one instant fill a window past the default
// bound of a small rule, 65536 sends: the maximum is exact up to it and a
// lower bound beyond, whatever else shares the history.
func TestMaxInWindowBound(t *testing.T) {
	small := rule.Rule{Limit: 10, Window: time.Second}
	for _, tt := range []struct {
		sends     int
		max       int64
		saturated bool
	}{
		{1 << 16, 1 << 16, false},
		{1<<16 + 1, 1 << 16, true},
		{1<<16 + 50, 1 << 16, true},
	} {
		for _, rules := range [][]rule.Rule{{small}, {small, {Limit: math.MaxInt64, Window: time.Second}}} {
			c := New(Config{Rules: rules, List: 1})
			for i := range tt.sends {
				require.NoError(t, c.Observe(7, int64(i)))
			}
			rr := c.Report().Rules[0]
			what := fmt.Sprintf("%d sends at once against %v", tt.sends, rules)
			assert.Equal(t, tt.max, rr.MaxInWindow, what)
			assert.Equal(t, tt.saturated, rr.MaxSaturated, what)
			assert.Equal(t, int64(tt.sends-10), rr.Violations, what)
			assert.Equal(t, int64(11), rr.First.Count, what)
			if len(rules) > 1 {
				huge := c.Report().Rules[1]
				assert.Equal(t, int64(tt.sends), huge.MaxInWindow, "%s: exact beside it", what)
				assert.False(t, huge.MaxSaturated, "%s: exact beside it", what)
			}
		}
	}
}

// TestExtremeTimesAndWindows: windows up to MaxInt64 and sends spread over
// the whole int64 range are judged on exact differences, without overflow.
func TestExtremeTimesAndWindows(t *testing.T) {
	ts := []int64{math.MinInt64, -1, 0, math.MaxInt64}
	for _, tt := range []struct {
		r     rule.Rule
		b     rule.Boundary
		viol  []int64
		count []int64 // of each violation's window
		max   int64
	}{
		// t=0 is 1 after -1; every other gap is MaxInt64 or more.
		{rule.Rule{Limit: 1, Window: math.MaxInt64}, rule.HalfOpen, []int64{2}, []int64{2}, 2},
		// Closed, a gap of exactly MaxInt64 shares the window.
		{rule.Rule{Limit: 1, Window: math.MaxInt64}, rule.Closed, []int64{1, 2, 3}, []int64{2, 2, 2}, 2},
		{rule.Rule{Limit: 1, Window: 2}, rule.HalfOpen, []int64{2}, []int64{2}, 2},
		{rule.Rule{Limit: 2, Window: math.MaxInt64}, rule.Closed, nil, nil, 2},
		// A window below zero holds nothing; a limit below zero is broken
		// by every send.
		{rule.Rule{Limit: 1, Window: -1}, rule.Closed, nil, nil, 0},
		{rule.Rule{Limit: -1, Window: 1}, rule.HalfOpen, []int64{0, 1, 2, 3}, []int64{1, 1, 1, 1}, 1},
	} {
		var viol, count []int64
		rep, err := Check(ts, Config{Rules: []rule.Rule{tt.r}, Boundary: tt.b, OnViolation: func(_ int, v Violation) {
			viol, count = append(viol, v.Index), append(count, v.Count)
		}})
		require.NoError(t, err)
		assert.Equal(t, tt.viol, viol, "%v %v", tt.r, tt.b)
		assert.Equal(t, tt.count, count, "%v %v: counts", tt.r, tt.b)
		assert.Equal(t, tt.max, rep.Rules[0].MaxInWindow, "%v %v", tt.r, tt.b)
	}
}

func TestExactWindowGap(t *testing.T) {
	// Sends spaced exactly W/N apart keep a half-open rule and break a
	// closed one.
	r := rule.Rule{Limit: 5, Window: time.Second}
	var ts []int64
	for i := range 20 {
		ts = append(ts, int64(i)*int64(200*time.Millisecond))
	}
	half, err := Check(ts, Config{Rules: []rule.Rule{r}})
	require.NoError(t, err)
	closed, err := Check(ts, Config{Rules: []rule.Rule{r}, Boundary: rule.Closed})
	require.NoError(t, err)
	assert.Zero(t, half.Rules[0].Violations, "half-open")
	assert.Equal(t, int64(15), closed.Rules[0].Violations, "closed")
}

func TestFirstViolationWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	ts := []int64{0, 100 * ms, 200 * ms, 1100 * ms, 1150 * ms}
	rep, err := Check(ts, Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, List: 5})
	require.NoError(t, err)
	rr := rep.Rules[0]
	require.Equal(t, int64(2), rr.Violations)
	f := rr.First
	require.NotNil(t, f)
	assert.Equal(t, 200*ms, f.Send.At, "the first violation is the send at 200ms")
	assert.Equal(t, int64(0), f.WindowStart.At, "in a window from 0")
	assert.Equal(t, int64(3), f.Count, "of 3 sends")
	require.Len(t, rr.Listed, 2)
	second := rr.Listed[1]
	assert.Equal(t, 1150*ms, second.Send.At, "the second violation is the send at 1150ms")
	assert.Equal(t, 200*ms, second.WindowStart.At, "in a window from 200ms")
	assert.Equal(t, int64(3), second.Count, "of 3 sends")
	assert.Equal(t, []Send{{At: 200 * ms, Ref: 2}, {At: 1100 * ms, Ref: 3}, {At: 1150 * ms, Ref: 4}}, second.Window)
}

func TestOutOfOrder(t *testing.T) {
	c := New(Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}}})
	require.NoError(t, c.Observe(10, 1))
	require.NoError(t, c.Observe(10, 2), "an equal time was refused")
	err := c.Observe(9, 3)
	var oe *OrderError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, int64(2), oe.Prev.Ref)
	assert.Equal(t, int64(3), oe.At.Ref)
}

func TestFixtures(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}
	for _, tt := range []struct {
		file string
		want [2]int64
	}{
		{"asyncio-sequential.txt", [2]int64{2, 0}},
		{"asyncio-combined.txt", [2]int64{0, 0}},
	} {
		ts := fixtures.MustTimes(t, tt.file)
		rep, err := Check(ts, Config{Rules: rules})
		require.NoError(t, err)
		assert.Equal(t, int64(30), rep.Sends, tt.file)
		for k := range rules {
			assert.Equal(t, tt.want[k], rep.Rules[k].Violations, "%s: %v", tt.file, rules[k])
		}
	}
}

func TestObserveBatchEqualsObserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 500 {
		ts := randomLog(rng, 1+rng.IntN(300), int64(1+rng.IntN(4)))
		cfg := Config{
			Rules:    []rule.Rule{{Limit: 1 + rng.IntN(5), Window: time.Duration(1 + rng.IntN(20))}, {Limit: 1 + rng.IntN(30), Window: time.Duration(1 + rng.IntN(60))}},
			Boundary: rule.Boundary(rng.IntN(2)),
			List:     rng.IntN(3),
		}
		want, err := Check(ts, cfg)
		require.NoError(t, err)
		c := New(cfg)
		refs := indexes(len(ts))
		for i := 0; i < len(ts); {
			n := min(len(ts)-i, rng.IntN(50))
			require.NoError(t, c.ObserveBatch(ts[i:i+n], refs[i:i+n]))
			i += n
		}
		require.Equal(t, want, c.Report(), "batched report on %v", ts)
	}
	c := New(Config{Rules: []rule.Rule{{Limit: 1, Window: 5}}})
	assert.Error(t, c.ObserveBatch([]int64{1, 3, 2}, []int64{0, 1, 2}), "an unsorted batch was taken")
}

// TestObserveBatchLarge covers batches of thousands of sends over rules
// whose histories wrap many times: the report must equal the
// one-send-at-a-time one.
func TestObserveBatchLarge(t *testing.T) {
	const batch = 8192
	rng := rand.New(rand.NewPCG(13, 14))
	ts := randomLog(rng, 10*batch, 3)
	refs := indexes(len(ts))
	cfg := Config{Rules: []rule.Rule{{Limit: 3, Window: 10}, {Limit: 40, Window: 100}, {Limit: 900, Window: 3000}}, List: 2}
	want, err := Check(ts, cfg)
	require.NoError(t, err)
	c := New(cfg)
	for i := 0; i < len(ts); i += batch {
		j := min(len(ts), i+batch)
		require.NoError(t, c.ObserveBatch(ts[i:j], refs[i:j]))
	}
	assert.Equal(t, want, c.Report())
	require.NotZero(t, want.Rules[0].Violations, "the log should break 3/10ns somewhere")
}

// TestIdleThenResume: releasing a quiet checker's memory (Idle) and going
// on must give the report of a checker that never released anything.
func TestIdleThenResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	total := 0
	for range 300 {
		// Bursts separated by gaps that are sometimes longer than every
		// window, so Idle sometimes succeeds.
		var ts []int64
		var at int64
		for range 1 + rng.IntN(8) {
			at += int64(rng.IntN(40))
			for range rng.IntN(20) {
				ts = append(ts, at)
				at += int64(rng.IntN(3))
			}
		}
		cfg := Config{
			Rules:    []rule.Rule{{Limit: 1 + rng.IntN(4), Window: time.Duration(1 + rng.IntN(10))}, {Limit: 1 + rng.IntN(8), Window: time.Duration(1 + rng.IntN(25))}},
			Boundary: rule.Boundary(rng.IntN(2)),
			List:     1,
		}
		want, err := Check(ts, cfg)
		require.NoError(t, err)
		c := New(cfg)
		released := 0
		for i, x := range ts {
			if i > 0 && rng.IntN(2) == 0 && c.Idle(x) {
				released++
				assert.Nil(t, c.hist.at, "Idle kept the history")
			}
			require.NoError(t, c.Observe(x, int64(i)))
		}
		require.Equal(t, want, c.Report(), "after %d releases on %v", released, ts)
		total += released
	}
	require.GreaterOrEqual(t, total, 100, "too few releases in all: the test does not exercise Idle")
}

// TestCheckCostsIsObserveCost: CheckCosts gives ObserveCost's verdict on
// each send in turn, Check's without units, and refuses costs that do not
// give each send one per unit.
func TestCheckCostsIsObserveCost(t *testing.T) {
	rules := []rule.Rule{{Limit: 2, Window: 10}, {Limit: 10, Window: 10, Unit: "tokens"}}
	times, costs := []int64{0, 1, 2, 3}, []int64{4, 4, 1, 3}
	rep, err := CheckCosts(times, costs, Config{Rules: rules, Units: []string{"tokens"}})
	require.NoError(t, err)
	c := New(Config{Rules: rules, Units: []string{"tokens"}})
	for i, at := range times {
		require.NoError(t, c.ObserveCost(at, int64(i), costs[i:i+1]))
	}
	assert.Equal(t, c.Report(), rep)
	assert.EqualValues(t, 2, rep.Rules[0].Violations)
	assert.EqualValues(t, 1, rep.Rules[1].Violations)

	plain, err := CheckCosts(times, nil, Config{Rules: rules[:1]})
	require.NoError(t, err)
	want, err := Check(times, Config{Rules: rules[:1]})
	require.NoError(t, err)
	assert.Equal(t, want, plain)

	_, err = CheckCosts(times, costs[:3], Config{Rules: rules, Units: []string{"tokens"}})
	assert.ErrorContains(t, err, "3 costs for 4 sends in 1 units")
}

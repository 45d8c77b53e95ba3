package checker

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
)

// The oracles below judge cost rules and window kinds straight from their
// definitions in docs/semantics.md, in big integers and rationals, sharing
// nothing with the checker.

// costLog is a log with one cost vector per send.
type costLog struct {
	at    []int64
	costs [][]int64
}

// verdict is an oracle's answer for one rule: the violating sends and, for
// window rules, the largest cost in any window.
type verdict struct {
	viol   []int64
	max    int64
	levels []string // a bucket's level at each violation
}

func bigOf(v int64) *big.Int { return big.NewInt(v) }

// gap returns t[i]-t[j] exactly.
func gap(a, b int64) *big.Int { return new(big.Int).Sub(bigOf(a), bigOf(b)) }

func costOf(l costLog, i, unit int) int64 {
	if unit < 0 {
		return 1
	}
	return l.costs[i][unit]
}

// oracleSliding sums the costs in (t_i-W, t_i] for each send, O(n^2); the
// maximum is over windows [t, t+W) that start at a send.
func oracleSliding(l costLog, r rule.Rule, unit int, b rule.Boundary) verdict {
	var v verdict
	w := bigOf(int64(r.Window))
	in := func(g *big.Int) bool {
		if b == rule.Closed {
			return g.Cmp(w) <= 0
		}
		return g.Cmp(w) < 0
	}
	for i := range l.at {
		sum := new(big.Int)
		for j := 0; j < i; j++ {
			if in(gap(l.at[i], l.at[j])) {
				sum.Add(sum, bigOf(costOf(l, j, unit)))
			}
		}
		sum.Add(sum, bigOf(costOf(l, i, unit)))
		if sum.Cmp(bigOf(int64(r.Limit))) > 0 {
			v.viol = append(v.viol, int64(i))
		}
		win := new(big.Int)
		for j := range l.at {
			if l.at[j] >= l.at[i] && in(gap(l.at[j], l.at[i])) {
				win.Add(win, bigOf(costOf(l, j, unit)))
			}
		}
		if win.Cmp(bigOf(v.max)) > 0 {
			v.max = win.Int64()
		}
	}
	return v
}

// fixedWindow names the window of a send: floor((t-o)/W), or its local
// date in the rule's zone.
func fixedWindow(t int64, r rule.Rule) string {
	if r.Zone != "" {
		loc, err := time.LoadLocation(r.Zone)
		if err != nil {
			panic(err)
		}
		return time.Unix(0, t).In(loc).Format("2006-01-02")
	}
	num := new(big.Int).Sub(bigOf(t), bigOf(int64(r.Offset)))
	k := new(big.Int)
	k.Div(num, bigOf(int64(r.Window))) // Euclidean: floor for W > 0
	return k.String()
}

// oracleFixed groups the sends by window.
func oracleFixed(l costLog, r rule.Rule, unit int) verdict {
	var v verdict
	sums := map[string]int64{}
	for i, t := range l.at {
		k := fixedWindow(t, r)
		c := costOf(l, i, unit)
		if sums[k]+c > int64(r.Limit) {
			v.viol = append(v.viol, int64(i))
		}
		sums[k] += c
		v.max = max(v.max, sums[k])
	}
	return v
}

// oracleFirstCall replays the windows opened by first sends. A send
// that finds no window open and breaks the rule on its own opens none.
func oracleFirstCall(l costLog, r rule.Rule, unit int) verdict {
	var v verdict
	var open *int64
	var sum int64
	for i, t := range l.at {
		c := costOf(l, i, unit)
		if open == nil || gap(t, *open).Cmp(bigOf(int64(r.Window))) >= 0 {
			if c > int64(r.Limit) {
				open = nil
				v.viol = append(v.viol, int64(i))
				v.max = max(v.max, c)
				continue
			}
			o := t
			open, sum = &o, 0
		}
		if sum+c > int64(r.Limit) {
			v.viol = append(v.viol, int64(i))
		}
		sum += c
		v.max = max(v.max, sum)
	}
	return v
}

// ratLevel writes a level rounded down to nine decimals, trailing zeros
// trimmed.
func ratLevel(x *big.Rat) string {
	scaled := new(big.Int).Quo(new(big.Int).Mul(x.Num(), bigOf(1e9)), x.Denom())
	whole, frac := new(big.Int).QuoRem(scaled, bigOf(1e9), new(big.Int))
	if frac.Sign() == 0 {
		return whole.String()
	}
	f := fmt.Sprintf("%09d", frac.Int64())
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return whole.String() + "." + f
}

// oracleBucket replays the level in rationals.
func oracleBucket(l costLog, r rule.Rule, unit int) verdict {
	var v verdict
	capacity := new(big.Rat).SetInt64(int64(r.Burst))
	rate := new(big.Rat).SetFrac(bigOf(int64(r.Limit)), bigOf(int64(r.Window)))
	level := new(big.Rat).Set(capacity)
	for i, t := range l.at {
		if i > 0 {
			level.Add(level, new(big.Rat).Mul(rate, new(big.Rat).SetInt(gap(t, l.at[i-1]))))
			if level.Cmp(capacity) > 0 {
				level.Set(capacity)
			}
		}
		c := new(big.Rat).SetInt64(costOf(l, i, unit))
		if c.Cmp(level) > 0 {
			v.viol = append(v.viol, int64(i))
			v.levels = append(v.levels, ratLevel(level))
			continue
		}
		level.Sub(level, c)
	}
	return v
}

// oracleGCRA is the generic cell rate algorithm: emission interval
// T = W/N, a send of cost c conforms when max(TAT, t) + c*T - t <= B*T.
func oracleGCRA(l costLog, r rule.Rule, unit int) []int64 {
	var viol []int64
	T := new(big.Rat).SetFrac(bigOf(int64(r.Window)), bigOf(int64(r.Limit)))
	tau := new(big.Rat).Mul(T, new(big.Rat).SetInt64(int64(r.Burst)))
	var tat *big.Rat
	for i, at := range l.at {
		t := new(big.Rat).SetInt64(at)
		start := t
		if tat != nil && tat.Cmp(t) > 0 {
			start = tat
		}
		next := new(big.Rat).Add(start, new(big.Rat).Mul(T, new(big.Rat).SetInt64(costOf(l, i, unit))))
		if new(big.Rat).Sub(next, t).Cmp(tau) > 0 {
			viol = append(viol, int64(i))
			continue
		}
		tat = next
	}
	return viol
}

func kindOracle(l costLog, r rule.Rule, unit int, b rule.Boundary) verdict {
	switch r.Kind {
	case rule.Fixed:
		return oracleFixed(l, r, unit)
	case rule.Bucket:
		return oracleBucket(l, r, unit)
	case rule.FirstCall:
		return oracleFirstCall(l, r, unit)
	}
	return oracleSliding(l, r, unit, b)
}

// observed runs the checker over l, collecting each rule's violations as
// OnViolation reports them, and checks they come in stream order and, for
// one send, in Rules order.
func observed(t *testing.T, l costLog, cfg Config) (Report, [][]Violation) {
	t.Helper()
	byRule := make([][]Violation, len(cfg.Rules))
	lastIdx, lastRule := int64(-1), -1
	cfg.OnViolation = func(r int, v Violation) {
		require.True(t, v.Index > lastIdx || v.Index == lastIdx && r > lastRule, "violation of rule %d by send %d after rule %d by send %d", r, v.Index, lastRule, lastIdx)
		lastIdx, lastRule = v.Index, r
		byRule[r] = append(byRule[r], v)
	}
	c := New(cfg)
	for i, at := range l.at {
		require.NoError(t, c.ObserveCost(at, int64(i), l.costs[i]))
	}
	return c.Report(), byRule
}

// randomCostLog draws n sends on a grid with ties, gaps of exactly a
// window, and costs around the limits: 0, 1, N and N+1.
func randomCostLog(rng *rand.Rand, n int, grid int64, units int, limits []int64) costLog {
	var l costLog
	at := int64(rng.IntN(3)-1) * grid * int64(rng.IntN(1000))
	for range n {
		switch rng.IntN(4) {
		case 0: // a tie
		case 1:
			at += grid
		default:
			at += grid * int64(rng.IntN(6))
		}
		l.at = append(l.at, at)
		c := make([]int64, units)
		for k := range c {
			n := limits[k]
			c[k] = []int64{0, 1, 1, 2, n, n + 1, int64(rng.IntN(int(n) + 2))}[rng.IntN(7)]
		}
		l.costs = append(l.costs, c)
	}
	return l
}

// randomKindRule draws a rule of any kind on the grid.
func randomKindRule(rng *rand.Rand, grid int64, unit string) rule.Rule {
	r := rule.Rule{Limit: 1 + rng.IntN(5), Window: time.Duration(grid * int64(1+rng.IntN(8))), Unit: unit}
	switch rng.IntN(4) {
	case 1:
		r.Kind = rule.Fixed
		r.Offset = time.Duration(rng.Int64N(int64(r.Window)))
		if rng.IntN(2) == 0 {
			r.Offset = time.Duration(grid * rng.Int64N(int64(r.Window)/grid))
		}
	case 2:
		r.Kind, r.Burst = rule.Bucket, 1+rng.IntN(6)
	case 3:
		r.Kind = rule.FirstCall
	}
	return r
}

func indexesOf(vs []Violation) []int64 {
	var out []int64
	for _, v := range vs {
		out = append(out, v.Index)
	}
	return out
}

// TestKindsAgainstOracles: on random logs, mixed call and cost rules of
// every kind give, rule by rule, the oracle's violating sends, maximum and
// bucket levels, with both boundaries.
func TestKindsAgainstOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 1500 {
		grid := int64(1 + rng.IntN(4))
		units := []string{"tokens", "bytes"}
		var rules []rule.Rule
		for range 1 + rng.IntN(4) {
			unit := []string{"", "tokens", "bytes"}[rng.IntN(3)]
			rules = append(rules, randomKindRule(rng, grid, unit))
		}
		limits := []int64{3, 5}
		for _, r := range rules {
			if r.Unit != "" {
				limits[slices.Index(units, r.Unit)] = int64(r.Limit)
			}
		}
		l := randomCostLog(rng, 1+rng.IntN(40), grid, 2, limits)
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			checkKinds(t, l, Config{Rules: rules, Units: units, Boundary: b, List: 1 + rng.IntN(3)})
		}
	}
}

func checkKinds(t *testing.T, l costLog, cfg Config) {
	t.Helper()
	rep, byRule := observed(t, l, cfg)
	for k, r := range cfg.Rules {
		what := fmt.Sprintf("%v (%v) among %v on %v %v", r, cfg.Boundary, cfg.Rules, l.at, l.costs)
		unit := slices.Index(cfg.Units, r.Unit)
		want := kindOracle(l, r, unit, cfg.Boundary)
		rr := rep.Rules[k]
		require.Equal(t, want.viol, indexesOf(byRule[k]), what)
		require.Equal(t, int64(len(want.viol)), rr.Violations, what)
		if r.Kind != rule.Bucket {
			require.Equal(t, want.max, rr.MaxInWindow, what)
		} else {
			var levels []string
			for _, v := range byRule[k] {
				levels = append(levels, v.Level)
			}
			require.Equal(t, want.levels, levels, what)
			if r.Unit == "" || unit >= 0 {
				require.Equal(t, oracleGCRA(l, r, unit), want.viol, "GCRA against the bucket: %s", what)
			}
		}
		require.Len(t, rr.Listed, min(len(want.viol), cfg.List), what)
		for _, v := range rr.Listed {
			require.Equal(t, v.Send, v.Window[len(v.Window)-1], "the listed window ends with the offending send: %s", what)
		}
	}
}

// TestFastAndSlowPathsAgree: a sliding call rule judged as a cost rule of
// cost 1 (and as a sliding rule among slow ones) gives the fast path's
// report.
func TestFastAndSlowPathsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 500 {
		grid := int64(1 + rng.IntN(4))
		r := rule.Rule{Limit: 1 + rng.IntN(5), Window: time.Duration(grid * int64(1+rng.IntN(8)))}
		l := randomCostLog(rng, 1+rng.IntN(60), grid, 1, []int64{1})
		for i := range l.costs {
			l.costs[i][0] = 1
		}
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			fast, err := Check(l.at, Config{Rules: []rule.Rule{r}, Boundary: b})
			require.NoError(t, err)
			cost := r
			cost.Unit = "calls"
			slow, _ := observed(t, l, Config{Rules: []rule.Rule{cost}, Boundary: b})
			f, s := fast.Rules[0], slow.Rules[0]
			require.Equal(t, f.Violations, s.Violations, "%v %v on %v", r, b, l.at)
			require.Equal(t, f.MaxInWindow, s.MaxInWindow, "%v %v on %v", r, b, l.at)
			require.Equal(t, f.MaxWindowStart, s.MaxWindowStart, "%v %v on %v", r, b, l.at)
			if f.First != nil {
				require.Equal(t, f.First.WindowStart, s.First.WindowStart)
				require.Equal(t, f.First.Count, s.First.Count)
			}
		}
	}
}

// TestSlidingKeptMeansFixedKept: every log that keeps the sliding rule N/W
// keeps the fixed rule N/W, for every offset.
func TestSlidingKeptMeansFixedKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range testrun.Seeds(100, 300) {
		grid := int64(1 + rng.IntN(4))
		slide := rule.Rule{Limit: 1 + rng.IntN(5), Window: time.Duration(grid * int64(1+rng.IntN(8)))}
		// Keep the candidates the sliding rule admits: a log that keeps it.
		cand := randomCostLog(rng, 80, grid, 0, nil)
		var l costLog
		for i, at := range cand.at {
			try := costLog{at: append(slices.Clone(l.at), at), costs: append(slices.Clone(l.costs), cand.costs[i])}
			if len(oracleSliding(try, slide, -1, rule.HalfOpen).viol) == 0 {
				l = try
			}
		}
		for o := int64(0); o < int64(slide.Window); o++ {
			fixed := slide
			fixed.Kind, fixed.Offset = rule.Fixed, time.Duration(o)
			rep, _ := observed(t, l, Config{Rules: []rule.Rule{slide, fixed}})
			require.Zero(t, rep.Rules[0].Violations)
			require.Zero(t, rep.Rules[1].Violations, "%v keeps %v but not %v", l.at, slide, fixed)
		}
	}
}

// TestExtremeTimes: sends at the ends of the int64 range, more than 2^63
// ns apart, in every kind.
func TestExtremeTimes(t *testing.T) {
	ends := []int64{math.MinInt64, math.MinInt64, math.MinInt64 + 1, -1, 0, 0, 1, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64}
	l := costLog{at: ends}
	for range ends {
		l.costs = append(l.costs, []int64{1})
	}
	big := time.Duration(math.MaxInt64)
	rules := []rule.Rule{
		{Limit: 2, Window: big, Unit: "tokens"},
		{Limit: 2, Window: big, Kind: rule.Fixed},
		{Limit: 2, Window: big, Kind: rule.Fixed, Offset: big - 1},
		{Limit: 3, Window: 3, Kind: rule.Fixed, Offset: 2},
		{Limit: 2, Window: big, Kind: rule.FirstCall},
		{Limit: 1, Window: big, Kind: rule.Bucket, Burst: math.MaxInt64},
		{Limit: math.MaxInt64, Window: 1, Kind: rule.Bucket, Burst: 2},
		{Limit: 3, Window: 1, Kind: rule.Bucket, Burst: 2},
	}
	for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
		checkKinds(t, l, Config{Rules: rules, Boundary: b, Units: []string{"tokens"}, List: 3})
	}
}

// TestEdgeInstants pins the examples of docs/semantics.md.
func TestEdgeInstants(t *testing.T) {
	ms := int64(time.Millisecond)
	judge := func(r string, at ...int64) []int64 {
		rr, err := rule.Parse(r)
		require.NoError(t, err)
		rep, byRule := observed(t, costLog{at: at, costs: make([][]int64, len(at))}, Config{Rules: []rule.Rule{rr}})
		require.Equal(t, int64(len(byRule[0])), rep.Rules[0].Violations)
		return indexesOf(byRule[0])
	}
	fixed := []int64{900 * ms, 950 * ms, 990 * ms, 1000 * ms, 1050 * ms, 1100 * ms}
	assert.Empty(t, judge("3/1s fixed", fixed...), "2N-1 sends across a fixed window's edge are legal")
	assert.Equal(t, []int64{3, 4, 5}, judge("3/1s", fixed...))
	assert.Equal(t, []int64{4}, judge("2/1s burst 4", 0, 0, 0, 0, 400*ms), "the bucket holds 0.8")
	assert.Empty(t, judge("2/1s burst 4", 0, 0, 0, 0, 500*ms), "the bucket refills to exactly 1 at 0.5 s")
	assert.Equal(t, []int64{2}, judge("2/1s first-call", 500*ms, 1400*ms, 1499*ms, 1500*ms), "the window opened at 0.5 s closes at 1.5 s")
}

// TestFirstCallViolatorOpensNoWindow: a send that breaks a first-call
// rule on its own, with no window open, is refused and opens none; the
// next send opens the window.
func TestFirstCallViolatorOpensNoWindow(t *testing.T) {
	r, err := rule.Parse("9 tokens/1500ms first-call")
	require.NoError(t, err)
	ms := int64(time.Millisecond)
	l := costLog{at: []int64{0, 100 * ms, 200 * ms}, costs: [][]int64{{10}, {1}, {1}}}
	c := New(Config{Rules: []rule.Rule{r}, List: 1})
	for i, at := range l.at {
		require.NoError(t, c.ObserveCost(at, int64(i), l.costs[i]))
	}
	rep := c.Report()
	assert.Equal(t, int64(1), rep.Rules[0].Violations, "only the send of 10 tokens breaks the rule")
	first := rep.Rules[0].First
	require.NotNil(t, first)
	assert.Nil(t, first.Span, "it opened no window")
	assert.Equal(t, int64(10), first.Units)
	assert.Equal(t, int64(10), rep.Rules[0].MaxInWindow, "the fullest window is never below what broke the rule")
	span, units, ok := c.CurrentWindow(0)
	require.True(t, ok)
	assert.Equal(t, Span{From: 100 * ms, To: 1600 * ms}, span, "the window opens at the next send")
	assert.Equal(t, int64(2), units)
	assert.Equal(t, []int64{0}, oracleFirstCall(l, r, 0).viol)
}

func TestBucketLevelAtViolation(t *testing.T) {
	r, err := rule.Parse("2/1s burst 4")
	require.NoError(t, err)
	ms := int64(time.Millisecond)
	rep, _ := observed(t, costLog{at: []int64{0, 0, 0, 0, 400 * ms}, costs: make([][]int64, 5)}, Config{Rules: []rule.Rule{r}, List: 1})
	v := rep.Rules[0].First
	require.NotNil(t, v)
	assert.Equal(t, "0.8", v.Level)
	assert.Equal(t, int64(5), v.Count, "five sends since the bucket was full")
}

// TestZoneDays: a daily window at midnight in a zone lasts 23, 24 or 25
// hours, as the zone's rules say.
func TestZoneDays(t *testing.T) {
	r, err := rule.Parse("2/1d fixed at 00:00 America/New_York")
	require.NoError(t, err)
	loc, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	days := []struct {
		date string
		long time.Duration
	}{{"2026-03-08", 23 * time.Hour}, {"2026-11-01", 25 * time.Hour}, {"2026-06-01", 24 * time.Hour}}
	for _, d := range days {
		start, err := time.ParseInLocation("2006-01-02", d.date, loc)
		require.NoError(t, err)
		s := start.UnixNano()
		end := s + int64(d.long)
		// Two sends at the day's ends, one just after its end: the third is
		// in the next day.
		at := []int64{s, end - 1, end, end + 1, end + 2}
		rep, byRule := observed(t, costLog{at: at, costs: make([][]int64, len(at))}, Config{Rules: []rule.Rule{r}, List: 1})
		assert.Equal(t, []int64{4}, indexesOf(byRule[0]), d.date)
		require.NotNil(t, rep.Rules[0].First)
		assert.Equal(t, &Span{From: end, To: end + int64(24*time.Hour)}, rep.Rules[0].First.Span, d.date)
		assert.Equal(t, oracleFixed(costLog{at: at, costs: make([][]int64, len(at))}, r, -1).viol, indexesOf(byRule[0]))
	}
	// A zone whose clocks skipped midnight: the day starts at 01:00.
	santiago, err := rule.Parse("1/1d fixed at 00:00 America/Santiago")
	require.NoError(t, err)
	sloc, _ := santiago.Location()
	from := time.Date(2022, 9, 11, 1, 0, 0, 0, sloc).UnixNano() // 00:00 did not exist
	start, _ := rule.FixedSpan(time.Date(2022, 9, 11, 12, 0, 0, 0, sloc).UnixNano(), 0, 0, sloc)
	assert.Equal(t, from, start)
}

func TestCostErrors(t *testing.T) {
	tokens := rule.Rule{Limit: 10, Window: time.Second, Unit: "tokens"}
	c := New(Config{Rules: []rule.Rule{tokens}})
	var ce *CostError
	require.ErrorAs(t, c.Observe(0, 1), &ce, "a send without its cost")
	assert.Contains(t, ce.Error(), "tokens")
	require.ErrorAs(t, New(Config{Rules: []rule.Rule{tokens}}).ObserveBatch([]int64{0}, []int64{1}), &ce)
	require.ErrorAs(t, New(Config{Rules: []rule.Rule{tokens}}).ObserveCost(0, 1, []int64{-1}), &ce)
	require.ErrorAs(t, New(Config{Rules: []rule.Rule{tokens}}).ObserveCost(0, 1, []int64{1, 2}), &ce)
	c = New(Config{Rules: []rule.Rule{tokens}})
	require.NoError(t, c.ObserveCost(0, 1, []int64{math.MaxInt64}))
	require.ErrorAs(t, c.ObserveCost(1, 2, []int64{1}), &ce, "a window's sum past int64")
	assert.Error(t, c.ObserveCost(2, 3, []int64{0}), "the checker stops after an overflow")
	err := New(Config{Rules: []rule.Rule{tokens}, Units: []string{"bytes"}}).ObserveCost(0, 1, []int64{1})
	assert.ErrorContains(t, err, "tokens")
	err = New(Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second, Kind: rule.Bucket}}}).Observe(0, 1)
	assert.ErrorContains(t, err, "burst")
}

// TestFitsForeseesOverflow: Fits names the send ObserveCost would refuse
// for a window's sum past int64, for every kind, and changes nothing, so
// that the checker goes on judging the sends that fit.
func TestFitsForeseesOverflow(t *testing.T) {
	for _, text := range []string{"10 tokens/1s", "10 tokens/1s fixed", "10 tokens/1s first-call", "10 tokens/1s burst 10"} {
		r, err := rule.Parse(text)
		require.NoError(t, err)
		c := New(Config{Rules: []rule.Rule{r}})
		require.NoError(t, c.ObserveCost(0, 1, []int64{5}))
		require.NoError(t, c.ObserveCost(1, 2, []int64{math.MaxInt64 - 10}))
		if r.Kind == rule.Bucket {
			assert.NoError(t, c.Fits(2, []int64{math.MaxInt64}), "%s: a bucket keeps no sum", text)
			continue
		}
		var ce *CostError
		require.ErrorAs(t, c.Fits(2, []int64{6}), &ce, text)
		assert.Contains(t, ce.Error(), text)
		assert.NoError(t, c.Fits(2, []int64{5}), "%s: the sum reaches MaxInt64 exactly", text)
		assert.NoError(t, c.Fits(int64(2*time.Second), []int64{math.MaxInt64}), "%s: the window has passed", text)
		require.NoError(t, c.ObserveCost(2, 3, []int64{5}), "%s: Fits changed nothing", text)
	}
}

// TestMixedKeepsFastVerdicts: adding slow rules changes nothing in the
// sliding call rules' reports.
func TestMixedKeepsFastVerdicts(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 200 {
		grid := int64(1 + rng.IntN(4))
		fast := []rule.Rule{{Limit: 1 + rng.IntN(4), Window: time.Duration(grid * int64(1+rng.IntN(8)))}}
		l := randomCostLog(rng, 1+rng.IntN(50), grid, 0, nil)
		alone, err := Check(l.at, Config{Rules: fast, List: 2})
		require.NoError(t, err)
		mixed, _ := observed(t, l, Config{Rules: append([]rule.Rule{randomKindRule(rng, grid, "")}, fast...), List: 2})
		require.Equal(t, alone.Rules[0], mixed.Rules[1])
	}
}

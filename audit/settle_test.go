package audit

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
)

// bfCall is one attempted call of the brute-force model, in ticks: sent at
// t if admitted, estimating e, settled by the provider to a after d, and
// learnt by the limiter lag after that.
type bfCall struct{ t, e, a, d, lag int64 }

// bfContract is n units and c calls per window of w ticks.
type bfContract struct{ n, c, w int64 }

// bfRun offers calls (in time order) to the post-call limiter, or to the
// reserve one, and returns the largest load the provider judged a send
// against, its own estimate included: written from docs/semantics.md
// ("Reserved costs") and the two designs' descriptions, sharing nothing
// with audit. A call the limiter refuses is dropped: a retry is one more
// call of the schedule.
func bfRun(k bfContract, calls []bfCall, reserve bool) int64 {
	var adm []bfCall
	worst := int64(0)
	for _, c := range calls {
		in := int64(0)
		var view int64
		for _, j := range adm {
			learnt := j.t + j.d + j.lag
			inWindow := j.t > c.t-k.w
			if inWindow {
				in++
			}
			switch {
			case reserve && inWindow && c.t >= learnt:
				view += j.a
			case reserve && inWindow:
				view += j.e
			case !reserve && learnt <= c.t && learnt > c.t-k.w:
				view += j.a // post-call charges the actual cost when it learns it
			}
		}
		if in >= k.c || (reserve && view+c.e > k.n) || (!reserve && view+1 > k.n) {
			continue
		}
		load := c.e
		for _, j := range adm {
			if j.t > c.t-k.w && c.t < j.t+j.d {
				load += j.e
			} else if j.t > c.t-k.w {
				load += j.a
			}
		}
		worst = max(worst, load)
		adm = append(adm, c)
	}
	return worst
}

// bfCase is a small contract and what its calls may draw.
type bfCase struct {
	k               bfContract
	e, a, dmax      int64
	lag, over, resv bool
}

func (c bfCase) bound() int64 {
	b := settleBound{n: c.k.n, per: 1, t: 1, calls: c.k.c, e: c.e, a: c.a, lag: c.lag, over: c.over}
	if c.resv {
		return reserveWorst(b)
	}
	return postCallWorst(b)
}

// randomSchedule draws up to 2(C + N) calls at nondecreasing instants of
// three windows.
func (c bfCase) randomSchedule(rng *rand.Rand) []bfCall {
	n := 1 + rng.IntN(int(2*(c.k.c+c.k.n)))
	var out []bfCall
	t := int64(0)
	for range n {
		t += rng.Int64N(3) * rng.Int64N(2)
		e := 1 + rng.Int64N(c.e)
		top := c.a
		if !c.over {
			top = min(top, e)
		}
		call := bfCall{t: t, e: e, a: rng.Int64N(top + 1), d: 1 + rng.Int64N(c.dmax)}
		if c.lag {
			call.lag = rng.Int64N(4)
		}
		out = append(out, call)
	}
	return out
}

// witness is the schedule the proofs say reaches the worst case, and the
// worst case found by trying every split the proofs name.
func (c bfCase) witness() ([]bfCall, int64) {
	a := c.a
	if !c.over {
		a = min(a, c.e)
	}
	w, calls, n, e := c.k.w, c.k.c, c.k.n, c.e
	if !c.resv && c.lag {
		out := make([]bfCall, 0, calls)
		for range calls - 1 {
			if a > e {
				out = append(out, bfCall{t: 0, e: e, a: a, d: 1, lag: 3}) // settled, unknown to the limiter
			} else {
				out = append(out, bfCall{t: 0, e: e, a: a, d: w}) // in flight
			}
		}
		return append(out, bfCall{t: 1, e: e, d: w}), e + (calls-1)*max(e, a)
	}
	if !c.resv {
		best, bestM := int64(-1), int64(0)
		for m := range calls {
			if v := min(n-1, m*a) + (calls-m)*e; v > best {
				best, bestM = v, m
			}
		}
		var out []bfCall
		left := min(n-1, bestM*a)
		for range bestM {
			out = append(out, bfCall{t: 0, e: e, a: min(a, left), d: 1})
			left -= min(a, left)
		}
		for range calls - bestM {
			out = append(out, bfCall{t: 1, e: e, d: w})
		}
		return out, best
	}
	if !c.over {
		var out []bfCall
		for left := min(n, calls*e); left > 0; left -= min(e, left) {
			out = append(out, bfCall{t: 0, e: min(e, left), d: w})
		}
		return out, min(n, calls*e)
	}
	return c.reserveOverWitness()
}

// reserveOverWitness: k sends of estimate 1 and actual A settle at the
// provider unknown to the limiter (none with no lag), the others fill the
// rest of its N, those worth more than E as sends settled and learnt.
func (c bfCase) reserveOverWitness() ([]bfCall, int64) {
	w, calls, n, e, a := c.k.w, c.k.c, c.k.n, c.e, c.a
	big := max(e, a)
	best, bestK := int64(-1), int64(0)
	unknown := int64(1) // with no lag, the limiter learns every settlement at once
	if c.lag {
		unknown = min(calls, n)
	}
	for k := range unknown {
		if v := k*a + min(n-k, (calls-1-k)*big+e); v > best {
			best, bestK = v, k
		}
	}
	var out []bfCall
	for range bestK {
		out = append(out, bfCall{t: 0, e: 1, a: a, d: 1, lag: 3})
	}
	rest := min(n-bestK, (calls-1-bestK)*big+e)
	last := min(e, rest)
	for left := rest - last; left > 0; {
		v := min(big, left)
		if v <= e {
			out = append(out, bfCall{t: 0, e: v, d: w})
		} else {
			out = append(out, bfCall{t: 0, e: 1, a: v, d: 1})
		}
		left -= v
	}
	return append(out, bfCall{t: 1, e: last, d: w}), best
}

// TestSettleWorstBruteForce: on random small contracts (N ≤ 10 units and
// C ≤ 5 calls per window of 2 to 5 ticks, estimates up to 4, actual costs
// up to 5, within their estimates or not, learnt by the limiter when the
// provider settles or up to 3 ticks later), no schedule of the
// brute-force model puts more in a window than postCallWorst and
// reserveWorst allow, and the schedule each proof names reaches it.
func TestSettleWorstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range testrun.Seeds(400, 4000) {
		c := bfCase{
			k:    bfContract{n: 1 + rng.Int64N(10), c: 1 + rng.Int64N(5), w: 2 + rng.Int64N(4)},
			e:    1 + rng.Int64N(4),
			a:    rng.Int64N(6),
			lag:  rng.IntN(2) == 0,
			over: rng.IntN(2) == 0,
			resv: i%2 == 1,
		}
		c.dmax = 1 + rng.Int64N(2*c.k.w)
		bound := c.bound()
		wit, best := c.witness()
		require.Equal(t, best, bound, "case %+v: the proof's worst case", c)
		require.Equal(t, bound, bfRun(c.k, wit, c.resv), "case %+v: its witness %v reaches it", c, wit)
		for range 200 {
			s := c.randomSchedule(rng)
			require.LessOrEqual(t, bfRun(c.k, s, c.resv), bound, "case %+v: schedule %v", c, s)
		}
	}
}

// TestSettleWorstEdges: no call rule leaves post-call unbounded and
// reserve at its N; windows longer than the limiter's take a piece of N
// each; extreme values saturate instead of wrapping.
func TestSettleWorstEdges(t *testing.T) {
	b := settleBound{n: 100, per: 10, t: 10, calls: Unbounded, e: 30, a: 15, lag: true}
	assert.Equal(t, int64(Unbounded), postCallWorst(b))
	assert.Equal(t, int64(100), reserveWorst(b))
	b.t = 11
	assert.Equal(t, int64(200), reserveWorst(b), "two pieces of the limiter's window")
	b.t, b.calls = 10, 2
	assert.Equal(t, int64(60), reserveWorst(b), "two calls of 30 at most")
	assert.Equal(t, int64(60), postCallWorst(b))
	b.over, b.a = true, 80
	assert.Equal(t, int64(110), reserveWorst(b), "one unknown settlement of 80 beside one send of 30")
	b.lag = false
	assert.Equal(t, int64(100), reserveWorst(b), "the limiter knows what the provider counts")
	b.lag = true
	b.t = 11
	assert.Equal(t, int64(Unbounded), reserveWorst(b), "costs that rise after a piece's last send")
	huge := settleBound{n: 1 << 62, per: 1, t: 1, calls: 1 << 40, e: 1 << 40, a: 1 << 40, lag: true}
	assert.Equal(t, int64(1<<63-1), postCallWorst(huge))
	assert.Equal(t, int64(1<<62), reserveWorst(huge))
}

// TestPostCallSaturationReachesAnalytic: at 500/1m, 90000 tokens/1m the
// settle-crowd workload puts in one window of the tokens rule what the
// analysis says post-call lets through, 500 calls of 9000 tokens in
// flight (within 5%: it is exact), and the crowds of reserve and
// redis-reserve reach their limit; with no cost rule all three are left
// out, each saying why.
func TestPostCallSaturationReachesAnalytic(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "500/1m, 90000 tokens/1m"))
	opt.Strategies, opt.Seeds, opt.NoSearch = []string{postCallName, reserveName, redisReserveName}, 1, true
	rep, err := Run(opt)
	require.NoError(t, err)
	require.Len(t, rep.Strategies, 3)
	want := map[string]int64{postCallName: 500 * 9000, reserveName: 90000, redisReserveName: 90000}
	for _, sa := range rep.Strategies {
		bound := sa.Bounds[1].Worst
		assert.Equal(t, want[sa.Name], bound, sa.Name)
		var crowd *Outcome
		for i := range sa.Outcomes {
			if sa.Outcomes[i].Workload == settleCrowdName {
				crowd = &sa.Outcomes[i]
			}
		}
		require.NotNil(t, crowd, "%s ran its crowd", sa.Name)
		measured := crowd.Rules[1].MaxInWindow
		assert.LessOrEqual(t, measured, bound, sa.Name)
		assert.GreaterOrEqual(t, float64(measured), 0.95*float64(bound), "%s: measured %d, analytic %d", sa.Name, measured, bound)
		for _, o := range sa.Outcomes {
			assert.LessOrEqual(t, o.Rules[1].MaxInWindow, bound, "%s on %s", sa.Name, o.Workload)
		}
	}
	opt.Rules = []rule.Rule{{Limit: 5, Window: 1e9}}
	rep, err = Run(opt)
	require.NoError(t, err)
	assert.Empty(t, rep.Strategies)
	assert.Equal(t, []Skipped{{postCallName, needsCostRule}, {reserveName, needsCostRule}, {redisReserveName, needsCostRule}}, rep.Skipped)
}

package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// settleRegime is how a drawn scenario's actual costs compare with its
// estimates.
type settleRegime int

const (
	actualBelow settleRegime = iota // every A < E
	actualEqual                     // A = E, both fixed
	actualZero                      // A = 0
	actualAbove                     // every A > E
)

func (g settleRegime) String() string { return [...]string{"A<E", "A=E", "A=0", "A>E"}[g] }

// settleStrategies are the strategies the reserved scenarios run: the
// post-call specimen, the limiter that keeps the estimates, and the
// reserve limiters in memory and on the embedded Redis.
var settleStrategies = []string{"post-call", "combined", "reserve", "redis-reserve"}

func costDist(lo, hi int64) workload.Dist {
	if lo == hi {
		return workload.Dist{Kind: workload.Fixed, A: time.Duration(lo)}
	}
	return workload.Dist{Kind: workload.Uniform, A: time.Duration(lo), B: time.Duration(hi)}
}

// drawSettleScenario draws a small scenario that settles its calls: a
// token rule of any kind, sometimes beside a call rule; calls that end at
// their send (a settlement tied with the send), exactly W later (at the
// window's edge) or anywhere within 2W; arrivals in a steady beat (ties
// between settlements and sends) or at random, near 0 or near 2^61 ns.
func drawSettleScenario(rng *rand.Rand, seed uint64) (*workload.Scenario, settleRegime) {
	w := []time.Duration{time.Second, 2 * time.Second, 10 * time.Second}[rng.IntN(3)]
	n := 20 + rng.IntN(80)
	tok := tokenRule(rng, n, w)
	s := &workload.Scenario{Name: fmt.Sprintf("settle-%d", seed), Rules: []rule.Rule{tok}, Workers: 1,
		Callers: 20 + rng.IntN(40), Seed: seed, Strategies: settleStrategies}
	if rng.IntN(2) == 0 {
		s.Rules = append([]rule.Rule{{Limit: 3 + rng.IntN(10), Window: w}}, s.Rules...)
	}
	if rng.IntN(4) == 0 {
		s.Boundary = rule.Closed
	}
	lo, hi := int64(n/4), int64(n/2)
	g := settleRegime(rng.IntN(4))
	est, act := costDist(lo, hi), costDist(0, lo-1)
	switch g {
	case actualEqual:
		est, act = costDist(lo, lo), costDist(lo, lo)
	case actualZero:
		act = costDist(0, 0)
	case actualAbove:
		act = costDist(hi+1, int64(n))
	}
	s.Costs = []workload.UnitCost{{Unit: "tokens", Dist: est}}
	s.Actual = []workload.UnitCost{{Unit: "tokens", Dist: act}}
	s.CallDuration = []workload.Dist{{}, {Kind: workload.Fixed, A: w}, {Kind: workload.Uniform, B: 2 * w}}[rng.IntN(3)]
	s.Arrivals = workload.Arrivals{Kind: workload.Interval, Every: w / time.Duration(2+rng.IntN(8))}
	if rng.IntN(2) == 0 {
		s.Arrivals = workload.Arrivals{Kind: workload.Poisson, Rate: float64(2+rng.IntN(10)) / w.Seconds()}
	}
	if rng.IntN(3) == 0 {
		s.Arrivals.Start = 1 << 61
	}
	if rng.IntN(2) == 0 {
		s.Lateness = workload.Dist{Kind: workload.Uniform, B: time.Millisecond}
	}
	return s, g
}

// tokenRule draws a rule of n tokens a window w, of any kind.
func tokenRule(rng *rand.Rand, n int, w time.Duration) rule.Rule {
	tok := rule.Rule{Limit: n, Window: w, Unit: "tokens"}
	switch rng.IntN(4) {
	case 1:
		tok.Kind = rule.Fixed
	case 2:
		tok.Kind, tok.Burst = rule.Bucket, n+rng.IntN(n)
	case 3:
		tok.Kind = rule.FirstCall
	}
	return tok
}

// oracleSends are a strategy's sends as the oracle takes them.
func oracleSends(st simulate.StrategyResult) []oracle.Send {
	out := make([]oracle.Send, len(st.Sends))
	for i, t := range st.Sends {
		u := st.SendSettled[i]
		out[i] = oracle.Send{T: t, Costs: map[string]int64{"tokens": st.SendCosts[i]}, Settled: &u,
			Actual: map[string]int64{"tokens": st.SendActuals[i]}}
	}
	return out
}

// TestSimulateReservedMatchesOracle: on drawn scenarios that settle their
// calls (every kind, A below, at, above the estimate and 0, settlements
// tied with sends and at window edges), the violations simulate reports
// for each strategy are the ones the oracle finds among its sends; and
// wherever no call costs more than its estimate, no window is ever
// overfilled under the reserve limiters or under combined, which keeps the
// estimates.
func TestSimulateReservedMatchesOracle(t *testing.T) {
	seeds := testrun.Seeds(40, 400)
	rng := rand.New(rand.NewPCG(7, 0x736574746c65))
	ran := map[string]int{}
	for seed := range uint64(seeds) {
		s, g := drawSettleScenario(rng, seed)
		var names []string
		for _, name := range settleStrategies {
			one := *s
			one.Strategies = []string{name}
			if catalog.Validate(&one) == nil {
				names = append(names, name)
			}
		}
		s.Strategies = names
		res, err := simulate.Run(s, simulate.Options{})
		require.NoError(t, err, "%s %v %v", s.Name, s.Rules, g)
		for _, st := range res.Strategies {
			ran[st.Name]++
			what := fmt.Sprintf("seed %d %s %v %s boundary %s, %d sends", seed, st.Name, s.Rules, g, s.Boundary, len(st.Sends))
			verdicts := oracle.JudgeAll(oracleSends(st), OracleRules(s.Rules), s.Boundary == rule.Closed)
			for k, v := range verdicts {
				var at []int64
				for _, i := range v.Violations {
					at = append(at, st.Sends[i])
				}
				assert.Equal(t, at, st.Rules[k].ViolationAt, "%s: rule %s", what, s.Rules[k])
				if v.Max != nil {
					assert.Equal(t, v.Max.Int64(), st.Rules[k].MaxInWindow, "%s: rule %s, fullest window", what, s.Rules[k])
				}
			}
			if g != actualAbove && s.Boundary == rule.HalfOpen && slices.Contains([]string{"combined", "reserve", "redis-reserve"}, st.Name) {
				for k, rr := range st.Rules {
					assert.Zero(t, rr.Violations, "%s: rule %s overfilled", what, s.Rules[k])
				}
			}
		}
	}
	for _, name := range settleStrategies {
		assert.Positive(t, ran[name], "%s never ran", name)
	}
}

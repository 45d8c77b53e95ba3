package simulate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// oldBisection is the search FindMargins made before it went seed by
// seed, kept as an oracle: every seed at 0; every seed at the bound hi;
// then bisection of all seeds at once between 0 (violating) and hi.
func oldBisection(clean func(seed int, k int64) bool, n int, hi int64) (found bool, k int64) {
	all := func(k int64) bool {
		for s := range n {
			if !clean(s, k) {
				return false
			}
		}
		return true
	}
	if all(0) {
		return true, 0
	}
	if !all(hi) {
		return false, 0
	}
	var lo int64
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; all(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return true, hi
}

// fakeSeeds runs search over a table: seed s is clean at step k when
// clean(s, k), its run lasts s hours and k ns (to tell which margin a run
// was made at), and its shortfall, which orders the search, is
// shortfall[s].
type fakeSeeds struct {
	clean     func(s int, k int64) bool
	shortfall []time.Duration
	runs      int
	bisected  int // seeds bisected: runs made at the bound
	hi        int64
}

func (f *fakeSeeds) run(k int64, seeds []int) ([]seedRun, error) {
	out := make([]seedRun, len(seeds))
	for j, s := range seeds {
		f.runs++
		if k == f.hi && len(seeds) == 1 {
			f.bisected++
		}
		out[j] = seedRun{violating: !f.clean(s, k), dur: time.Duration(s)*time.Hour + time.Duration(k), shortfall: f.shortfall[s]}
	}
	return out, nil
}

// searchFake runs search on f's n seeds up to step hi.
func searchFake(t *testing.T, f *fakeSeeds, n int, hi int64) (bool, int64) {
	t.Helper()
	f.hi = hi
	zero, err := f.run(0, allSeeds(n))
	require.NoError(t, err)
	found, k, at, err := search(f.run, zero, hi)
	require.NoError(t, err)
	if found {
		for s, r := range at {
			require.Equal(t, time.Duration(s)*time.Hour+time.Duration(k), r.dur, "seed %d's run is not the one at the margin found, %d", s, k)
			require.False(t, r.violating, "seed %d violates at the margin found, %d", s, k)
		}
	}
	return found, k
}

// thresholds makes seeds monotone in the margin: seed s is clean from step
// th[s] on.
func thresholds(th []int64) func(int, int64) bool {
	return func(s int, k int64) bool { return k >= th[s] }
}

// TestSearchAgreesWithBisection: when every seed stays clean once it is,
// the seed-by-seed search and the bisection of every seed at once find the
// same margin, the largest threshold (or none below the bound), whatever
// the order the shortfalls put the seeds in.
func TestSearchAgreesWithBisection(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	for c := range 2000 {
		n, hi := 1+rng.IntN(60), int64(1+rng.IntN(300))
		th := make([]int64, n)
		f := &fakeSeeds{clean: thresholds(th), shortfall: make([]time.Duration, n)}
		var want int64
		for s := range th {
			switch r := rng.IntN(10); {
			case r == 0:
				th[s] = 0 // clean at 0
			case r == 1 && c%3 == 0:
				th[s] = hi + 1 + rng.Int64N(5) // no margin up to the bound
			default:
				th[s] = 1 + rng.Int64N(hi)
			}
			want = max(want, th[s])
			f.shortfall[s] = time.Duration(rng.IntN(4)) // ties: seed order
		}
		oldFound, oldK := oldBisection(f.clean, n, hi)
		found, k := searchFake(t, f, n, hi)
		require.Equal(t, want <= hi, oldFound, "case %d: the oracle", c)
		require.Equal(t, []any{oldFound, oldK}, []any{found, k}, "case %d: thresholds %v, bound %d, shortfalls %v", c, th, hi, f.shortfall)
	}
}

// TestSearchRaisesTheMaxEverySeed: seeds met in the order of the
// shortfalls with ever larger thresholds make every seed raise the margin;
// the search still agrees, and every seed was bisected.
func TestSearchRaisesTheMaxEverySeed(t *testing.T) {
	const n, hi = 40, 1000
	th := make([]int64, n)
	f := &fakeSeeds{clean: thresholds(th), shortfall: make([]time.Duration, n)}
	for s := range th {
		th[s] = int64(10 + 20*s)
		f.shortfall[s] = time.Duration(n - s) // largest first: seed 0
	}
	_, oldK := oldBisection(f.clean, n, hi)
	found, k := searchFake(t, f, n, hi)
	assert.True(t, found)
	assert.Equal(t, oldK, k)
	assert.Equal(t, int64(10+20*(n-1)), k)
	assert.Equal(t, n, f.bisected, "every seed raised the margin")
}

// TestSearchOfSeedsNotMonotone: a seed clean in a pocket below its
// threshold. The search halves the range as the bisection of every seed
// would, so it lands where that did (a pocket on its path, here 45); a
// seed that breaks when the margin widens past its threshold is caught by
// the last pass and bisected again.
func TestSearchOfSeedsNotMonotone(t *testing.T) {
	const hi = 60
	pocket := func(lo, hi, from int64) func(k int64) bool {
		return func(k int64) bool { return k >= from || (k >= lo && k <= hi) }
	}
	for _, tt := range []struct {
		name      string
		clean     []func(k int64) bool
		shortfall []time.Duration
		want      int64
		bisected  int
	}{
		{"a pocket on the bisection's path", []func(int64) bool{pocket(45, 45, 53)}, []time.Duration{0}, 45, 1},
		{"a pocket off it", []func(int64) bool{pocket(47, 48, 53)}, []time.Duration{0}, 53, 1},
		{"a seed breaking at the margin another needs", []func(int64) bool{
			pocket(20, 35, 41),                             // first in order: bisected to 20
			func(k int64) bool { return k >= 38 },          // raises the margin to 38, where the first breaks
			func(k int64) bool { return k == 0 || k >= 5 }, // clean at 0
		}, []time.Duration{2, 1, 0}, 41, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSeeds{clean: func(s int, k int64) bool { return tt.clean[s](k) }, shortfall: tt.shortfall}
			n := len(tt.clean)
			_, oldK := oldBisection(f.clean, n, hi)
			found, k := searchFake(t, f, n, hi)
			assert.True(t, found)
			assert.Equal(t, tt.want, k)
			assert.Equal(t, oldK, k, "the bisection of every seed")
			assert.Equal(t, tt.bisected, f.bisected, "seeds bisected")
		})
	}
}

// providerEdge is the shipped provider-edge scenario, written out here.
func providerEdge() *workload.Scenario {
	ln := func(d time.Duration, sigma float64) workload.Dist {
		return workload.Dist{Kind: workload.LogNormal, A: d, Sigma: sigma}
	}
	return &workload.Scenario{
		Name: "provider-edge", Rules: []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 600, Window: time.Minute}},
		Strategies: []string{"combined", "gated", "local-per-worker"},
		Callers:    30, Workers: 4, MaxInFlight: 4, Arrivals: workload.Arrivals{Kind: workload.Poisson, Rate: 14},
		CallDuration: ln(40*msec, 0.5), Lateness: workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 2 * msec},
		OpCost:    workload.Dist{Kind: workload.Uniform, A: 3 * time.Microsecond, B: 6 * time.Microsecond},
		SendDelay: []workload.Dist{ln(20*msec, 0.2), ln(20*msec, 0.2), ln(20*msec, 0.2), ln(35*msec, 0.2)},
		RedisRTT:  workload.Dist{Kind: workload.Uniform, A: 400 * time.Microsecond, B: msec},
		Seed:      1,
	}
}

// TestFindMarginsAgreesWithBisection: on provider-edge, FindMargins finds
// the margin the bisection of every seed at once finds, with the mean run
// of every seed at it, whatever the number of cores.
func TestFindMarginsAgreesWithBisection(t *testing.T) {
	s, n, res := providerEdge(), 20, msec
	if os.Getenv("RLCHECK_FULL") != "" {
		s.Strategies = append(s.Strategies, "redis")
	}
	r, err := FindMargins(s, MarginOptions{Runs: n, Resolution: res})
	require.NoError(t, err)
	for i, name := range s.Strategies {
		st, _ := catalog.Lookup(name)
		sm := r.Strategies[i]
		require.Equal(t, name, sm.Name)
		runs := map[[2]int64]StrategyResult{}
		at := func(seed int, k int64) StrategyResult {
			if r, ok := runs[[2]int64{int64(seed), k}]; ok {
				return r
			}
			sc := *s
			sc.Margin = time.Duration(k) * res
			r, err := RunStrategy(&sc, st, s.Seed+uint64(seed), Options{})
			require.NoError(t, err)
			runs[[2]int64{int64(seed), k}] = r
			return r
		}
		clean := func(seed int, k int64) bool {
			r := at(seed, k)
			return r.Violations() == 0
		}
		found, k := oldBisection(clean, n, int64((sm.Bound+res-1)/res))
		msg := fmt.Sprintf("%s: margin %v, bound %v, %d runs at %d margins", name, sm.Margin, sm.Bound, sm.Runs, sm.Tried)
		require.Equal(t, found, sm.Found, msg)
		require.Equal(t, time.Duration(k)*res, sm.Margin, msg)
		if found {
			var dur, sends int64
			for seed := range n {
				dur += int64(at(seed, k).Duration)
				sends += int64(len(at(seed, k).Sends))
			}
			assert.Equal(t, RunCost{Duration: time.Duration(dur / int64(n)), Sends: float64(sends) / float64(n)}, sm.AtMargin, msg)
			assert.Less(t, sm.Runs, 3*n, "%s: every seed at 0 and at the margin, and a few bisected", name)
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, err := FindMargins(s, MarginOptions{Runs: n, Resolution: res})
	require.NoError(t, err)
	assert.Equal(t, r, one, "one core searches as several do")
}

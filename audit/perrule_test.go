package audit

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/internal/testrun"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// TestPerRuleLetsACrowdThrough: for 10/s, 500/min, 10000/day the
// x/time/rate, redis_rate and throttled designs get a burst and rate per
// rule (the Redis ones with RLCHECK_FULL=1) that lets 30 callers
// arriving together through in at most 6 s, where burst 1 on every rule
// takes over 4 minutes, and the setting keeps every rule on every workload
// and saturation workload: over 3 seeds, and with RLCHECK_FULL=1 over
// 1,000 (100 for the Redis designs).
func TestPerRuleLetsACrowdThrough(t *testing.T) {
	seeds, redisSeeds := 3, 3
	names := []string{catalog.XRateReserveAll, catalog.XRateChained, catalog.ThrottledMem}
	if os.Getenv("RLCHECK_FULL") == "1" {
		// A Lua script per call in the embedded Redis: 1,000 seeds of
		// 10,191 sends each take a quarter of an hour per design.
		seeds, redisSeeds, names = 1000, 100, append(names, catalog.RedisRate, catalog.ThrottledRedis)
	}
	rep, opt := audited(t, "10/s,500/min,10000/day", 2, names...)
	for _, sa := range rep.Strategies {
		seeds := seeds
		if sa.Name == catalog.RedisRate || sa.Name == catalog.ThrottledRedis {
			seeds = redisSeeds
		}
		require.NotNil(t, sa.Safe, sa.Name)
		require.Len(t, sa.Safe.PerRule, 3, "%s: a burst and rate per rule", sa.Name)
		require.Len(t, sa.Crowds, 2, sa.Name)
		assert.Equal(t, 30, sa.Crowds[1].Callers, sa.Name)
		assert.LessOrEqual(t, sa.Crowds[1].Took, 6*time.Second, "%s: 30 callers with %s", sa.Name, settingWords(sa.design, *sa.Safe))
		assert.Greater(t, crowdBound(sa.design, *sa.Safe, opt.Rules, 30), time.Duration(0), sa.Name)
		st := mustStrategy(t, sa.Name, *sa.Safe)
		var sends int
		for _, wl := range append(rep.Workloads, saturationWorkloads(sa.design, *sa.Safe, &opt)...) {
			out, err := runSeeds(wl.Scenario(&opt, sa.Name), strategyRunner(st), 1, seeds, false)
			require.NoError(t, err)
			for seed, res := range out {
				sends += len(res.Sends)
				cr, err := checker.Check(res.Sends, checker.Config{Rules: opt.Rules})
				require.NoError(t, err)
				for _, rr := range cr.Rules {
					require.Zero(t, rr.Violations, "%s %s seed %d: violations of %v", sa.Name, wl.Name, seed+1, rr.Rule)
				}
			}
		}
		t.Logf("%s (%s): 30 callers in %v, %d seeds, %d sends, no violation", sa.Name, settingWords(sa.design, *sa.Safe), sa.Crowds[1].Took, seeds, sends)
	}
}

// TestBurstOneCrowdIsSlow: with one slack for every limiter
// (go.uber.org/ratelimit), the only safe setting of 10/s, 500/min,
// 10000/day is slack 0, and 30 callers then wait for the daily bucket:
// one every 8.64 s.
func TestBurstOneCrowdIsSlow(t *testing.T) {
	rep, opt := audited(t, "10/s,500/min,10000/day", 1, catalog.UberRatelimit)
	sa := rep.Strategies[0]
	require.NotNil(t, sa.Safe)
	assert.Equal(t, 0, sa.Safe.Slack)
	assert.Greater(t, sa.Crowds[1].Took, 4*time.Minute, "30 callers through burst 1 on a daily bucket")
	assert.InDelta(t, float64(29*(24*time.Hour+sa.Safe.Margin)/10000), float64(crowdBound(sa.design, *sa.Safe, opt.Rules, 30)), 1, "29 tokens at 10000 per day")
}

// TestDefaultSaturationReachesAnalytic: at the settings users write, the
// saturation workloads drive the minute rule of 10/s, 500/min, 10000/day
// to within 5% of each design's analytic worst case (609 of 610 for the
// chained x/time/rate limiters, 500 of the sliding logs' joint 510, and
// for chained fixed windows the daily limiter's 10,000 (chainWindowsWorst),
// which the edge crowd reaches: 10,001 callers wait for the next day and
// 10,000 of them go at its start, in one second with windows aligned to the
// epoch, over one retry spacing of 8.64 s with ulule's).
func TestDefaultSaturationReachesAnalytic(t *testing.T) {
	// The edge crowd is twice the daily limit: every day the same contract
	// with a day of 2,000, the 10,000 in the long run.
	day := testrun.Seeds(int64(2000), 10000)
	opt := DefaultOptions(mustRules(t, fmt.Sprintf("10/s,500/min,%d/day", day)))
	opt.Seeds, opt.NoSearch = 1, true
	opt.Strategies = []string{catalog.XRateChained, catalog.XRateReserveAll, catalog.UberRatelimit, catalog.ThrottledMem,
		catalog.GuideScript, catalog.RedisClientTime, catalog.FixedWindow}
	if testrun.Full() {
		// A script per call in the embedded Redis: a second or so more;
		// ulule's crowd asks again every 8.64 s for 20 minutes: 15 s or so.
		opt.Strategies = append(opt.Strategies, catalog.RedisRate, catalog.ThrottledRedis, catalog.UluleRedis)
	}
	rep, err := Run(opt)
	require.NoError(t, err)
	for _, sa := range rep.Strategies {
		var most, mostSecond int64
		for _, o := range sa.Outcomes {
			most = max(most, o.Rules[1].MaxInWindow)
			mostSecond = max(mostSecond, o.Rules[0].MaxInWindow)
		}
		worst := sa.Bounds[1].Worst
		assert.GreaterOrEqual(t, most*100, worst*95, "%s: %d of the analytic %d in one minute", sa.Name, most, worst)
		assert.LessOrEqual(t, most, worst, "%s: never above the analytic worst case", sa.Name)
		switch sa.Name {
		case catalog.XRateChained:
			assert.GreaterOrEqual(t, most, int64(580), "x/time/rate chained in one minute")
		case catalog.FixedWindow:
			assert.Equal(t, day, worst, "the daily limiter's N")
			assert.Equal(t, day, mostSecond, "the crowd goes in one second")
		case catalog.UluleRedis:
			assert.Equal(t, day, worst, "the daily limiter's N")
			assert.Less(t, mostSecond, day/5, "the crowd spreads over 8.64 s")
		}
	}
}

// TestLatenessMovesEveryMargin: one model of delay. Timer lateness up to
// 70 ms moves every design's suggested margin to at least 70 ms, as op
// costs of the same size do: the search for a safe setting runs per design
// with the lateness and with the op cost, each suggestion at or above the
// smallest provable margin, which an exact runtime keeps below.
func TestLatenessMovesEveryMargin(t *testing.T) {
	slow := workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 70 * time.Millisecond}
	for _, name := range catalog.AuditStrategyNames() {
		d := mustDesign(t, name)
		if d.Tuning().noSetting != "" && d.Tuning().family != designWindows {
			continue // no setting to move
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			provableMargin := func(opt *Options) time.Duration {
				cs := provable(opt, &StrategyAudit{Name: name, design: d})
				require.NotEmpty(t, cs, "a provable setting")
				return cs[0].Margin
			}
			margin := func(late, op workload.Dist) time.Duration {
				opt := DefaultOptions(mustRules(t, "5/1s"))
				opt.Lateness, opt.OpCost, opt.Seeds, opt.Verify, opt.Strategies = late, op, 1, 1, []string{name}
				smallest := provableMargin(&opt)
				rep, err := Run(opt)
				require.NoError(t, err)
				sa := rep.Strategies[0]
				require.NotNil(t, sa.Safe, "a suggestion (%s)", sa.Rejected)
				assert.GreaterOrEqual(t, sa.Safe.Margin, smallest, "suggested at or above the smallest provable margin")
				return sa.Safe.Margin
			}
			exactOpt := DefaultOptions(mustRules(t, "5/1s"))
			exactOpt.Lateness, exactOpt.OpCost = workload.Dist{}, workload.Dist{}
			exact := provableMargin(&exactOpt)
			late, op := margin(slow, workload.Dist{}), margin(workload.Dist{}, slow)
			assert.GreaterOrEqual(t, late, 70*time.Millisecond, "lateness")
			assert.GreaterOrEqual(t, op, 70*time.Millisecond, "op cost")
			assert.Greater(t, late, exact, "lateness moves the margin")
			t.Logf("suggested margins: exact %v, lateness %v, op cost %v", exact, late, op)
		})
	}
}

// audited runs the audit of contract for names on seed 1, verified over
// verify seeds.
func audited(t *testing.T, contract string, verify int, names ...string) (*Report, Options) {
	t.Helper()
	opt := DefaultOptions(mustRules(t, contract))
	opt.Seeds, opt.Verify, opt.Strategies = 1, verify, names
	rep, err := Run(opt)
	require.NoError(t, err)
	return rep, opt
}

// TestAskOrderMovesTheBound: in a chain, the limiters asked after a rule's
// widen its window by their delays, so 10/s at its full rate holds only
// when its limiter is asked last; the search finds that order.
func TestAskOrderMovesTheBound(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "10/s,500/min,10000/day"))
	d := mustDesign(t, catalog.XRateChained)
	cfg := catalog.LibConfig{Margin: 5 * time.Millisecond, PerRule: []libs.RuleLimit{{Burst: 1, Limit: 10}, {Burst: 10, Limit: 500}, {Burst: 30, Limit: 9970}}}
	assert.Greater(t, boundsOf(d, cfg, &opt)[0].Worst, int64(10), "10/s asked first")
	cfg.Order = []int{1, 2, 0}
	assert.True(t, analyticSafe(boundsOf(d, cfg, &opt)), "10/s asked last: %+v", boundsOf(d, cfg, &opt))
	assert.Equal(t, "bursts 1·10·30, rates 10·500·9970, asked 2·3·1, N per W+5ms", settingWords(d, cfg))
	assert.True(t, strings.HasPrefix(code(d, cfg, opt.Rules), "rate.NewLimiter(rate.Limit(500/60.005), 10)"), "constructors in the order asked")

	cs := perRuleCandidates(&opt, d, catalog.LibConfig{Margin: 5 * time.Millisecond})
	require.NotEmpty(t, cs)
	assert.Equal(t, 10, cs[0].RuleLimitAt(0, opt.Rules[0]).Limit, "the best ranked keeps 10/s at its full rate")
	assert.Equal(t, 2, askPositions(cs[0], 3)[0], "10/s asked last")
	// Designs that judge every rule at once have no order to search.
	assert.Len(t, askOrders(&opt, mustDesign(t, catalog.XRateReserveAll), catalog.LibConfig{}), 1)
	assert.Len(t, askOrders(&opt, d, catalog.LibConfig{}), 6)
}

package adapters

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/audit"
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/nodetest"
	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// nodeProject is adapters/node beside its npm packages, installed once per
// package-lock.json into the user's cache.
func nodeProject(t testing.TB) (node, dir string) {
	return nodetest.Project(t, "the Node adapters' tests", "node", "@sinonjs/fake-timers/package.json")
}

// openNode starts one of the folder's programs as an adapter.
func openNode(t testing.TB, script string) *adapter.Program {
	node, dir := nodeProject(t)
	prog, err := adapter.Open(adapter.Config{Command: node + " " + filepath.Join(dir, script)})
	require.NoError(t, err)
	t.Cleanup(func() { prog.Close() })
	return prog
}

// TestNodeAdapterTests runs the folder's own tests (node --test).
func TestNodeAdapterTests(t *testing.T) {
	t.Parallel()
	node, dir := nodeProject(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "# fail 0")
	assert.NotContains(t, string(out), "# pass 0\n")
}

// TestNodeLimitersOnSeed: on seed.yaml the template's sliding log keeps
// every window, as Go's combined does, so the virtual clock makes no
// phantom violations; every library set up one limiter per rule overfills
// a window in every run but Bottleneck per rule with its minTime stagger,
// which random seeds never catch (TestBottleneckPerRuleWorstCase does);
// and the same seeds give the same sends.
func TestNodeLimitersOnSeed(t *testing.T) {
	t.Parallel()
	sc, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	n := seedsOr(30)
	mine, err := simulate.RunSeeds(&sc.Scenario, n, simulate.Options{Strategies: []string{"combined"}, Exec: openNode(t, "my_limiter.mjs")})
	require.NoError(t, err)
	require.Len(t, mine.Strategies, 2)
	assert.Equal(t, "my-sliding-log", mine.Strategies[1].Name)
	assert.Zero(t, mine.Strategies[1].RunsWithViolations, "a sliding log checked and recorded once keeps every window")

	prog := openNode(t, "limiters.mjs")
	res, err := simulate.RunSeeds(&sc.Scenario, n, simulate.Options{Strategies: []string{}, Exec: prog})
	require.NoError(t, err)
	require.Len(t, res.Strategies, len(prog.Strategies()))
	for _, st := range res.Strategies {
		switch st.Name {
		case "node-p-throttle-strict": // a sliding log per rule, acquired in turn: the guide's sequential
			assert.Greater(t, st.RunsWithViolations, n/2, st.Name)
			assert.Less(t, st.RunsWithViolations, n, st.Name)
		case "node-bottleneck-mintime":
			assert.Greater(t, st.RunsWithViolations, n/2, "minTime spaces launches W/N apart from their planned instants, and late timers pull some closer")
			assert.Zero(t, st.Rules[0].Max, "5/1s, 200 ms apart, is spaced 250 ms for 12/3s")
		case "node-bottleneck-per-rule":
			assert.Zero(t, st.RunsWithViolations, "callers arriving together leave along the minTime stagger")
		default:
			assert.Equal(t, n, st.RunsWithViolations, "%s overfills a window in every run", st.Name)
		}
	}
	wide := sc.Scenario
	wide.Margin = 3 * time.Millisecond // the lateness's spread
	withMargin, err := simulate.RunSeeds(&wide, n, simulate.Options{Strategies: []string{}, Exec: openNode(t, "limiters.mjs node-bottleneck-mintime")})
	require.NoError(t, err)
	require.Len(t, withMargin.Strategies, 1)
	assert.Zero(t, withMargin.Strategies[0].RunsWithViolations, "minTime over (W + lateness spread)/N keeps every window")
	again, err := simulate.RunSeeds(&sc.Scenario, 10, simulate.Options{Strategies: []string{}, Exec: prog})
	require.NoError(t, err)
	for i, st := range again.Strategies {
		assert.Equal(t, res.Strategies[i].Rules[0].PerRun[:10], st.Rules[0].PerRun, st.Name)
	}
}

// boundaryRun is one run of 5/1s with exact timers: one call at 0, then
// four at 900 ms and five at 950 ms.
func boundaryRun(t *testing.T, strategy string) *adapter.Run {
	r := mustRule(t, "5/1s")
	run := &adapter.Run{Type: "run", Version: adapter.Version, Run: 1, Strategy: strategy, Scenario: "boundary",
		Seed: 1, Key: "rlcheck:boundary", Boundary: "half-open", Units: []string{}, Workers: 1,
		Rules:    []adapter.RuleSpec{{Text: r.String(), Limit: r.Limit, WindowNS: int64(r.Window), Kind: "sliding"}},
		Lateness: adapter.Draws{Dist: "0s", DrawsNS: []int64{0}}, OpCost: adapter.Draws{Dist: "0s", DrawsNS: []int64{0}}}
	for i, at := range []int64{0, 900, 900, 900, 900, 950, 950, 950, 950, 950} {
		run.Calls = append(run.Calls, adapter.Call{ID: i, ArrivalNS: at * int64(time.Millisecond), Costs: []int64{}})
	}
	return run
}

// sends returns an answer's send instants, in time order.
func sends(t *testing.T, a *adapter.Answer) []int64 {
	var out []int64
	for _, c := range a.Calls {
		require.Equal(t, adapter.Sent, c.Outcome)
		out = append(out, c.SendNS)
	}
	slices.Sort(out)
	return out
}

// TestRLFMemoryIsAFixedWindow: RateLimiterMemory's "5 points per 1 s"
// opens its window at the first point consumed (0) and empties it at 1 s,
// so four calls at 900 ms and five released at 1 s put nine sends in
// [900 ms, 1.9 s): four violations of the sliding 5/1s, the sends at 1 s
// but the first, which is exactly 1 s after the call at 0.
func TestRLFMemoryIsAFixedWindow(t *testing.T) {
	t.Parallel()
	prog := openNode(t, "limiters.mjs")
	a, err := prog.Run(boundaryRun(t, "node-rlf-memory"))
	require.NoError(t, err)
	ms := int64(time.Millisecond)
	got := sends(t, a)
	assert.Equal(t, []int64{0, 900 * ms, 900 * ms, 900 * ms, 900 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms, 1000 * ms}, got)
	rep, err := checker.Check(got, checker.Config{Rules: []rule.Rule{mustRule(t, "5/1s")}})
	require.NoError(t, err)
	assert.EqualValues(t, 4, rep.Rules[0].Violations)
	assert.EqualValues(t, 9, rep.Rules[0].MaxInWindow)
}

func mustRule(t *testing.T, s string) rule.Rule {
	r, err := rule.Parse(s)
	require.NoError(t, err)
	return r
}

// TestRLFRedisIsAFixedWindowOnTheRealClock: RateLimiterRedis keeps its
// window in a key Redis expires on its own clock, so node-rlf-redis runs on
// the real clock against a real redis-server: the run of
// TestRLFMemoryIsAFixedWindow takes its real second, and the window that
// empties at about 1 s lets the crowd at 950 ms through beside the four
// sent at 900 ms.
func TestRLFRedisIsAFixedWindowOnTheRealClock(t *testing.T) {
	srv := redistest.Start(t)
	node, dir := nodeProject(t)
	prog, err := adapter.Open(adapter.Config{Command: "REDIS_URL=redis://" + srv.Addr + " " + node + " " + filepath.Join(dir, "rlf_redis.mjs")})
	require.NoError(t, err)
	defer prog.Close()
	begun := time.Now()
	a, err := prog.Run(boundaryRun(t, "node-rlf-redis"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(begun), 950*time.Millisecond, "a real-clock run takes its scenario's time")
	got := sends(t, a)
	ms := int64(time.Millisecond)
	assert.Less(t, got[0], 100*ms)
	assert.GreaterOrEqual(t, got[5], 950*ms, "the crowd at 950 ms waits for the window to empty")
	rep, err := checker.Check(got, checker.Config{Rules: []rule.Rule{mustRule(t, "5/1s")}})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rep.Rules[0].Violations, int64(4))
	assert.GreaterOrEqual(t, rep.Rules[0].MaxInWindow, int64(9))
}

// TestBottleneckPerRuleWorstCase: Bottleneck one limiter per rule, each a
// reservoir staggered by minTime and chained, keeps every window of
// seed.yaml on every seed (TestNodeLimitersOnSeed), but audit's worst-case
// search finds a schedule that puts 13 sends in a window of 12/3s: the
// second rule's reservoir refills on its own schedule, not its window's.
func TestBottleneckPerRuleWorstCase(t *testing.T) {
	t.Parallel()
	opt := audit.DefaultOptions([]rule.Rule{mustRule(t, "5/1s"), mustRule(t, "12/3s")})
	opt.Seeds, opt.NoSearch, opt.SearchDir = 1, true, t.TempDir()
	opt.Exec = openNode(t, "limiters.mjs node-bottleneck-per-rule")
	rep, err := audit.Run(opt)
	require.NoError(t, err)
	require.Len(t, rep.Worst, 1)
	w := rep.Worst[0]
	assert.Equal(t, "node-bottleneck-per-rule", w.Strategy)
	assert.Positive(t, w.Rules[1].Violations, "the search finds a violation of 12/3s")
	assert.Greater(t, w.Rules[1].MaxInWindow, int64(12))
	assert.FileExists(t, w.File)
}

package scenarios

import (
	"flag"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
)

// acceptSeeds, when set, is the seeds of the acceptance run, hours long:
// scripts/bucketed-seeds.sh passes -args -seeds 1000.
var acceptSeeds = flag.Int("seeds", 0, "bucketed tests: seeds per scenario, in memory and on Redis (0: the run's default)")

// bucketedSeeds is how many seeds each shipped scenario runs under the
// bounded-memory strategies: a sample in go test, more with
// RLCHECK_FULL=1 (CI's run), -seeds with the acceptance run
// (scripts/bucketed-seeds.sh).
func bucketedSeeds(t *testing.T) (inMemory, embedded int) {
	switch {
	case *acceptSeeds > 0:
		return *acceptSeeds, *acceptSeeds
	case testrun.Full():
		return 50, 10
	case testing.Short() || raceEnabled:
		return 2, 1
	}
	return 3, 1
}

// violating counts the runs in which the limiter broke a rule: among the
// arrivals at the provider, or, for a scenario with a send path (whose
// delays only a margin can absorb: see provider-edge's own tests), among
// the limiter's own admissions.
func violating(rs *simulate.RunsResult) int {
	if rs.SendPath {
		return rs.Strategies[0].RunsWithRecordViolations
	}
	return rs.Strategies[0].RunsWithViolations
}

// heavy scenarios run the script only in the full run: tens of thousands
// of script runs each.
func heavy(name string) bool {
	return os.Getenv("RLCHECK_FULL") != "1" && (name == "api-contract" || name == "long-window")
}

// TestBucketedNeverViolate: the default policy (exact logs for small
// limits, bucketed windows for large ones) breaks no rule of any shipped
// scenario, in memory and in the script on the embedded Redis.
func TestBucketedNeverViolate(t *testing.T) {
	mem, emb := bucketedSeeds(t)
	for _, n := range Names() {
		s, err := Shipped(n)
		require.NoError(t, err)
		for _, c := range []struct {
			strategy string
			seeds    int
		}{{"combined-bucketed", mem}, {"redis-bucketed", emb}} {
			seeds := c.seeds
			if heavy(n) {
				if c.strategy != "combined-bucketed" {
					continue
				}
				seeds = 1
			}
			rs, err := simulate.RunSeeds(&s.Scenario, seeds, simulate.Options{Strategies: []string{c.strategy}})
			require.NoError(t, err, "%s %s", n, c.strategy)
			assert.Zero(t, violating(rs), "%s %s: runs with violations over %d seeds", n, c.strategy, seeds)
		}
	}
}

// TestForcedBucketsNeverViolate keeps every rule of every shipped scenario
// in buckets, small limits too (the default policy keeps those exact), in
// the combined limiter and the redis script, which keep a rule as it says.
func TestForcedBucketsNeverViolate(t *testing.T) {
	mem, emb := bucketedSeeds(t)
	for _, n := range Names() {
		for _, k := range []int{1, 16} {
			s, err := Shipped(n)
			require.NoError(t, err)
			for i := range s.Rules {
				if s.Rules[i].Kind == rule.Sliding {
					s.Rules[i].Buckets = k
				}
			}
			for _, c := range []struct {
				strategy string
				seeds    int
			}{{"combined", mem}, {"redis", emb}} {
				if heavy(n) && c.strategy != "combined" {
					continue
				}
				rs, err := simulate.RunSeeds(&s.Scenario, c.seeds, simulate.Options{Strategies: []string{c.strategy}})
				require.NoError(t, err, "%s %s", n, c.strategy)
				assert.Zero(t, violating(rs), "%s with %d buckets, %s: runs with violations over %d seeds", n, k, c.strategy, c.seeds)
			}
		}
	}
}

// TestRealRedisBucketedNeverViolate is the same on a real redis-server.
func TestRealRedisBucketedNeverViolate(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = c.Close() })
	seeds := 1
	switch {
	case *acceptSeeds > 0:
		seeds = *acceptSeeds
	case testrun.Full():
		seeds = 5
	}
	for _, n := range Names() {
		if heavy(n) {
			continue
		}
		s, err := Shipped(n)
		require.NoError(t, err)
		rs, err := simulate.RunSeeds(&s.Scenario, seeds, simulate.Options{Strategies: []string{"redis-bucketed"}, Redis: c})
		require.NoError(t, err, n)
		assert.Zero(t, violating(rs), "%s: runs with violations over %d seeds", n, seeds)
	}
}

// runPair runs the exact combined limiter and the default policy on a
// shipped scenario.
func runPair(t *testing.T, name string) (exact, bucketed simulate.StrategyResult) {
	s, err := Shipped(name)
	require.NoError(t, err)
	r, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"combined", "combined-bucketed"}})
	require.NoError(t, err)
	return r.Strategies[0], r.Strategies[1]
}

// TestBucketedUtilisationOnAPIContract: the daily quota binds, and the
// default policy spends it in the exact log's time, within 2%.
func TestBucketedUtilisationOnAPIContract(t *testing.T) {
	exact, b := runPair(t, "api-contract")
	assert.Len(t, b.Sends, len(exact.Sends), "sends")
	assert.InEpsilon(t, float64(exact.Duration), float64(b.Duration), 0.02, "duration %v against the exact log's %v", b.Duration, exact.Duration)
}

// TestBucketedUtilisationOnLongWindow: at saturation the default policy's
// 64 buckets give up less than 1/64 of the exact log's sends.
func TestBucketedUtilisationOnLongWindow(t *testing.T) {
	exact, b := runPair(t, "long-window")
	s, _ := Shipped("long-window")
	k := s.Rules[0].Keeping()
	require.Equal(t, rule.DefaultBuckets, k)
	assert.GreaterOrEqual(t, float64(len(b.Sends)), float64(len(exact.Sends))*(1-1/float64(k)), "sends against the exact log's")
	assert.Less(t, len(b.Sends), len(exact.Sends), "the buckets give up some capacity")
}

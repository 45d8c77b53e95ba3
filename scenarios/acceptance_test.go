package scenarios

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/simulate"
)

func violations(t *testing.T, st simulate.StrategyResult) []int64 {
	t.Helper()
	out := make([]int64, len(st.Rules))
	for i, r := range st.Rules {
		out[i] = r.Violations
	}
	return out
}

// TestSeedReproducesTheGuide: on its own seed, sequential breaks 5/1s
// twice and combined never, both in 7.0 s, as the recorded asyncio runs did.
func TestSeedReproducesTheGuide(t *testing.T) {
	s, err := Shipped("seed")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"sequential", "combined"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"sequential": {2, 0}, "combined": {0, 0}}
	for _, st := range r.Strategies {
		got := violations(t, st)
		if got[0] != want[st.Name][0] || got[1] != want[st.Name][1] {
			t.Errorf("%s: violations %v, want %v", st.Name, got, want[st.Name])
		}
		if len(st.Sends) != 30 || st.Duration.Round(100*time.Millisecond) != 7*time.Second {
			t.Errorf("%s: %d sends in %v, want 30 in 7.0 s", st.Name, len(st.Sends), st.Duration)
		}
	}
}

// TestSeedWithoutLatenessHidesTheBug is the lesson about naive fake
// clocks: with every wake-up exactly on time, sequential looks clean.
func TestSeedWithoutLatenessHidesTheBug(t *testing.T) {
	s, _ := Shipped("seed")
	s.Lateness = simulate.Dist{}
	r, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"sequential"}})
	if err != nil {
		t.Fatal(err)
	}
	if v := violations(t, r.Strategies[0]); v[0] != 0 || v[1] != 0 {
		t.Fatalf("sequential with no lateness: %v violations, want none", v)
	}
	// With no operation cost either, no seed shows it.
	s.OpCost = simulate.Dist{}
	rs, err := simulate.RunSeeds(&s.Scenario, 50, simulate.Options{Strategies: []string{"sequential"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := rs.Strategies[0].RunsWithViolations; n != 0 {
		t.Fatalf("exact clock: %d of 50 runs violate", n)
	}
}

// raceEnabled shortens the runs under the race detector, which slows every
// coroutine switch; seeds are fixed, so the shorter test is as stable.
var raceEnabled bool

func TestSeedOverManySeeds(t *testing.T) {
	s, _ := Shipped("seed")
	runs := 1000
	if raceEnabled {
		runs = 100
	}
	rs, err := simulate.RunSeeds(&s.Scenario, runs, simulate.Options{Strategies: []string{"sequential", "combined", "gated"}})
	if err != nil {
		t.Fatal(err)
	}
	seq := rs.Strategies[0]
	if seq.RunsWithViolations*2 < runs {
		t.Errorf("sequential violates in %d of %d runs, want at least half", seq.RunsWithViolations, runs)
	}
	if p50, max := seq.Rules[0].P50, seq.Rules[0].Max; p50 < 1 || p50 > 3 || max > 10 {
		t.Errorf("sequential 5/1s: p50 %d, max %d; want typically 1-3", p50, max)
	}
	for _, st := range rs.Strategies[1:] {
		if st.RunsWithViolations != 0 {
			t.Errorf("%s violates in %d runs", st.Name, st.RunsWithViolations)
		}
	}
}

// TestProviderEdgeNeedsAMargin: with no margin, combined and redis keep
// every window among their own admissions and still overfill the
// provider's; local-per-worker overfills both.
func TestProviderEdgeNeedsAMargin(t *testing.T) {
	s, err := Shipped("provider-edge")
	require.NoError(t, err)
	r, err := simulate.Run(&s.Scenario, simulate.Options{})
	require.NoError(t, err)
	for _, st := range r.Strategies {
		assert.Positive(t, st.Violations(), st.Name)
		if st.Name == "local-per-worker" {
			assert.Positive(t, st.RecordViolations(), st.Name)
		} else {
			assert.Zero(t, st.RecordViolations(), st.Name)
		}
	}
}

package scenarios

import (
	"os"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/simulate"
)

// TestSeedTracksTheRecordedRuns compares the seed scenario, send by send,
// with the real asyncio runs it models: same number of sends, the same
// verdict from the checker, and every send within a few milliseconds of
// the recorded one. It is what the lateness and cost model is tuned to.
func TestSeedTracksTheRecordedRuns(t *testing.T) {
	s, err := Shipped("seed")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ strategy, fixture string }{
		{"sequential", "asyncio-sequential.txt"},
		{"combined", "asyncio-combined.txt"},
	} {
		f, err := os.Open("../testdata/fixtures/" + tt.fixture)
		if err != nil {
			t.Fatal(err)
		}
		recorded, err := ReadTimes(tt.fixture, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		st, _ := simulate.Lookup(tt.strategy)
		res, err := simulate.RunStrategy(&s.Scenario, st, s.Seed, simulate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sends) != len(recorded) {
			t.Fatalf("%s: %d sends, recorded %d", tt.strategy, len(res.Sends), len(recorded))
		}
		want, _ := checker.Check(recorded, checker.Config{Rules: s.Rules})
		for i, rr := range res.Rules {
			if rr.Violations != want.Rules[i].Violations || rr.MaxInWindow != want.Rules[i].MaxInWindow {
				t.Errorf("%s %v: %d violations, max %d in a window; recorded %d and %d", tt.strategy, rr.Rule,
					rr.Violations, rr.MaxInWindow, want.Rules[i].Violations, want.Rules[i].MaxInWindow)
			}
		}
		const tolerance = 10 * time.Millisecond
		for i := range recorded {
			if d := time.Duration(res.Sends[i] - recorded[i]).Abs(); d > tolerance {
				t.Errorf("%s send %d: at %d ns, recorded %d ns (%v apart)", tt.strategy, i+1, res.Sends[i], recorded[i], d)
			}
		}
	}
}

package realrun

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// fastSeed is the shipped seed scenario run 20 times faster: about 350 ms.
func fastSeed(t *testing.T, strategies ...string) *Report {
	t.Helper()
	scn, err := scenarios.Shipped("seed")
	if err != nil {
		t.Fatal(err)
	}
	if strategies != nil {
		scn.Strategies = strategies
	}
	s, err := Scale(&scn.Scenario, 20)
	if err != nil {
		t.Fatal(err)
	}
	// Predicting redis starts a miniredis per seed: too slow for a unit test.
	pred, err := Predict(s, 20, []string{"sequential", "combined", "gated"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Report{Scenario: s, Speed: 20, Prediction: pred, Runs: []*Result{res}}
}

// TestRunSeed checks what the real clock guarantees whatever the load: every
// caller sends once, the gate's cap holds (the in-flight count is taken
// between Acquire and Release, so it does not depend on timing), timers
// never wake early, and every figure reaches the report. Violation counts
// on the real clock depend on the machine's timers, so they are printed,
// not asserted.
func TestRunSeed(t *testing.T) {
	rep := fastSeed(t, "sequential", "combined", "gated", "redis")
	res := rep.Runs[0]
	if len(res.Strategies) != 4 {
		t.Fatalf("%d strategies", len(res.Strategies))
	}
	for _, st := range res.Strategies {
		if len(st.Sends) != 30 || st.Cancelled != 0 || len(st.Rules) != 2 {
			t.Errorf("%s: %d sends, %d cancelled, %d rules", st.Name, len(st.Sends), st.Cancelled, len(st.Rules))
		}
		for i := 1; i < len(st.Sends); i++ {
			if st.Sends[i] < st.Sends[i-1] {
				t.Fatalf("%s: sends out of order", st.Name)
			}
		}
		// The limiter's own record instants are taken under its lock (or
		// in the script), so no scheduling delay can excuse a violation.
		if (st.RecordViolations == nil) != (st.Name == "sequential") {
			t.Errorf("%s: record violations %v", st.Name, st.RecordViolations)
		}
		for _, n := range st.RecordViolations {
			if n != 0 {
				t.Errorf("%s: its own records break a rule: %v", st.Name, st.RecordViolations)
			}
		}
		if (st.SendGap != nil) != (st.Name == "redis") {
			t.Errorf("%s: send gaps %v", st.Name, st.SendGap)
		}
		if st.Name == "gated" && (st.MaxSlots != 4 || st.MaxInFlight > 4) {
			t.Errorf("gated: %d in flight, cap %d", st.MaxInFlight, st.MaxSlots)
		}
		if len(st.Late) == 0 && st.Name != "redis" {
			t.Errorf("%s: no sleep measured", st.Name)
		}
		for _, d := range st.Late {
			if d < 0 {
				t.Errorf("%s: a timer woke %v early", st.Name, -d)
			}
		}
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + text.String())
	for _, want := range []string{"scenario seed on the real clock", "run 1 of 1", "predicted p5 p50 p95 max", "timer lateness"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q", want)
		}
	}
	// redis was run but not predicted: its row says so rather than
	// borrowing another strategy's forecast.
	if !regexp.MustCompile(`(?m)^redis +\d+/1 +- +5/50ms +\d+ +- +-`).MatchString(text.String()) {
		t.Errorf("no unpredicted redis row")
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []struct {
			Strategies []struct {
				Name  string
				Sent  int
				Rules []struct{ Rule string }
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Runs) != 1 || len(back.Runs[0].Strategies) != 4 || back.Runs[0].Strategies[1].Rules[1].Rule != "12/150ms" {
		t.Errorf("json: %s", js.String())
	}
}

func TestRunCancelledContext(t *testing.T) {
	scn, err := scenarios.Shipped("seed")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, &scn.Scenario, Options{}); err == nil {
		t.Fatal("a run under an ended context reported success")
	}
}

func TestRunUnknownStrategy(t *testing.T) {
	scn, err := scenarios.Shipped("seed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), &scn.Scenario, Options{Strategies: []string{"nope"}}); err == nil {
		t.Fatal("unknown strategy accepted")
	}
}

// TestRunMargin: with a margin the limiter spaces its records by W+margin,
// and no send can precede its record, so the third send of 1/50ms with a
// 100ms margin comes at least 300ms after the start.
func TestRunMargin(t *testing.T) {
	s := &simulate.Scenario{Name: "margin", Rules: []rule.Rule{{Limit: 1, Window: 50 * time.Millisecond}},
		Strategies: []string{"combined"}, Callers: 3, Workers: 1, Arrivals: simulate.Arrivals{Kind: simulate.AllAtOnce}}
	res, err := Run(context.Background(), s, Options{Margin: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sends := res.Strategies[0].Sends
	if len(sends) != 3 || sends[2] < int64(300*time.Millisecond) {
		t.Fatalf("sends %v: the margin was not enforced", sends)
	}
	if res.Strategies[0].Violations() != 0 {
		t.Fatalf("sends 150ms apart break 1/50ms: %v", sends)
	}
}

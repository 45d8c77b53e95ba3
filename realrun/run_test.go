package realrun

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/workload"
)

// fastSeed is the shipped seed scenario run 20 times faster: about 350 ms.
func fastSeed(t *testing.T, strategies ...string) *Report {
	t.Helper()
	scn, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	if strategies != nil {
		scn.Strategies = strategies
	}
	s, err := Scale(&scn.Scenario, 20)
	require.NoError(t, err)
	// Predicting redis starts a miniredis per seed: too slow for a unit test.
	pred, err := Predict(simulator, s, 20, []string{"sequential", "combined", "gated"})
	require.NoError(t, err)
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
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
	require.Len(t, res.Strategies, 4, "strategies")
	for _, st := range res.Strategies {
		assert.Len(t, st.Sends, 30, "%s: sends", st.Name)
		assert.Zero(t, st.Cancelled, "%s: cancelled", st.Name)
		assert.Len(t, st.Rules, 2, "%s: rules", st.Name)
		require.IsNonDecreasing(t, st.Sends, "%s: sends out of order", st.Name)
		// The limiter's own record instants are taken under its lock (or
		// in the script), so no scheduling delay can excuse a violation.
		if st.Name == "sequential" {
			assert.Nil(t, st.RecordViolations, "%s: record violations", st.Name)
		} else {
			assert.NotNil(t, st.RecordViolations, "%s: record violations", st.Name)
		}
		for _, n := range st.RecordViolations {
			assert.Zero(t, n, "%s: its own records break a rule: %v", st.Name, st.RecordViolations)
		}
		if st.Name == "redis" {
			assert.NotNil(t, st.SendGap, "%s: send gaps", st.Name)
		} else {
			assert.Nil(t, st.SendGap, "%s: send gaps", st.Name)
		}
		if st.Name == "gated" {
			assert.Equal(t, 4, st.MaxSlots, "gated: cap")
			assert.LessOrEqual(t, st.MaxInFlight, 4, "gated: in flight")
		}
		if st.Name != "redis" {
			assert.NotEmpty(t, st.Late, "%s: no sleep measured", st.Name)
		}
		for _, d := range st.Late {
			assert.GreaterOrEqual(t, d, time.Duration(0), "%s: a timer woke early", st.Name)
		}
	}
	var text, js bytes.Buffer
	require.NoError(t, WriteText(&text, rep))
	t.Log("\n" + text.String())
	for _, want := range []string{"scenario seed on the real clock", "run 1 of 1", "predicted p5 p50 p95 max", "timer lateness"} {
		assert.Contains(t, text.String(), want, "text")
	}
	// redis was run but not predicted: its row says so rather than
	// borrowing another strategy's forecast.
	assert.Regexp(t, `(?m)^redis +\d+/1 +- +5/50ms +\d+ +- +-`, text.String(), "no unpredicted redis row")
	require.NoError(t, WriteJSON(&js, rep))
	var back struct {
		Runs []struct {
			Strategies []struct {
				Name  string
				Sent  int
				Rules []struct{ Rule string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Len(t, back.Runs, 1, "json: %s", js.String())
	require.Len(t, back.Runs[0].Strategies, 4, "json: %s", js.String())
	require.Len(t, back.Runs[0].Strategies[1].Rules, 2, "json: %s", js.String())
	assert.Equal(t, "12/150ms", back.Runs[0].Strategies[1].Rules[1].Rule, "json: %s", js.String())
}

func TestRunCancelledContext(t *testing.T) {
	scn, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, &scn.Scenario, Options{})
	assert.Error(t, err, "a run under an ended context reported success")
}

func TestRunUnknownStrategy(t *testing.T) {
	scn, err := scenarios.Shipped("seed")
	require.NoError(t, err)
	_, err = Run(context.Background(), &scn.Scenario, Options{Strategies: []string{"nope"}})
	assert.Error(t, err, "unknown strategy accepted")
}

// TestRunMargin: with a margin the limiter spaces its records by W+margin,
// and no send can precede its record, so the third send of 1/50ms with a
// 100ms margin comes at least 300ms after the start.
func TestRunMargin(t *testing.T) {
	s := &workload.Scenario{Name: "margin", Rules: []rule.Rule{{Limit: 1, Window: 50 * time.Millisecond}},
		Strategies: []string{"combined"}, Callers: 3, Workers: 1, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}}
	res, err := Run(context.Background(), s, Options{Margin: 100 * time.Millisecond})
	require.NoError(t, err)
	sends := res.Strategies[0].Sends
	require.Len(t, sends, 3, "sends %v", sends)
	assert.GreaterOrEqual(t, sends[2], int64(300*time.Millisecond), "sends %v: the margin was not enforced", sends)
	assert.Zero(t, res.Strategies[0].Violations(), "sends 150ms apart break 1/50ms: %v", sends)
}

package realrun

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestSendDelayIsSlept: worker 0's request spends 60 ms on the way and
// worker 1's none, so combined, exact on its records (admissions 100 ms
// apart under 1/100ms), lets the provider see two requests about 40 ms
// apart: one violation there, none among the records. The real clock's own
// lateness would have to exceed 60 ms to hide it.
func TestSendDelayIsSlept(t *testing.T) {
	s := &workload.Scenario{
		Name: "edge", Rules: []rule.Rule{{Limit: 1, Window: 100 * time.Millisecond}}, Strategies: []string{"combined", "sequential"},
		Callers: 2, Workers: 2, Arrivals: workload.Arrivals{Kind: workload.Interval, Every: 10 * time.Millisecond},
		SendDelay: []workload.Dist{{A: 60 * time.Millisecond}, {}},
	}
	res, err := Run(context.Background(), s, Options{})
	require.NoError(t, err)
	for _, st := range res.Strategies {
		require.Len(t, st.Sends, 2, st.Name)
		assert.GreaterOrEqual(t, st.Sends[0], int64(60*time.Millisecond), "%s: the first arrival waits out its delay", st.Name)
		assert.Equal(t, int64(1), st.Rules[0].Violations, st.Name)
		assert.Equal(t, []int64{0}, st.RecordViolations, "%s: judged on the admissions too", st.Name)
	}
}

func TestScaleShrinksTheSendPath(t *testing.T) {
	s := &workload.Scenario{
		Rules:     []rule.Rule{{Limit: 1, Window: time.Second}},
		SendDelay: []workload.Dist{{Kind: workload.Uniform, A: 20 * time.Millisecond, B: 40 * time.Millisecond}},
		RedisRTT:  workload.Dist{A: 4 * time.Millisecond}, Margin: 8 * time.Millisecond,
	}
	c, err := Scale(s, 4)
	require.NoError(t, err)
	assert.Equal(t, workload.Dist{Kind: workload.Uniform, A: 5 * time.Millisecond, B: 10 * time.Millisecond}, c.SendDelay[0])
	assert.Equal(t, time.Millisecond, c.RedisRTT.A)
	assert.Equal(t, 2*time.Millisecond, c.Margin)
	assert.Equal(t, 20*time.Millisecond, s.SendDelay[0].A, "Scale changed its argument")
}

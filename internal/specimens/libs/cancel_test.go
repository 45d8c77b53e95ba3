package libs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// TestCancelledCallers pins what abandoned waits cost each design: 20
// callers at once under 5/1s, 12/3s, each giving up after 1 s.
func TestCancelledCallers(t *testing.T) {
	tests := []struct {
		strategy  string
		sends     int
		cancelled int
		leaked    []int64 // tokens kept with nothing sent, per rule
	}{
		// Chained: a caller abandoned on the 5/1s limiter hands back
		// nothing, since later reservations are queued behind it.
		{catalog.XRateChained, 10, 10, []int64{9, 0}},
		// Reserve-all cancels both reservations, but CancelAt restores
		// only the last queued one's token.
		{catalog.XRateReserveAll, 10, 10, []int64{9, 9}},
		// Take has no context: every caller is sent, late.
		{catalog.UberRatelimit, 20, 0, []int64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			res := exact(t, tt.strategy, "5/1s,12/3s", libs.Default(), 0, workload.Arrivals{Kind: workload.AllAtOnce}, 20, time.Second)
			assert.Len(t, res.Sends, tt.sends, "sends")
			assert.Equal(t, tt.cancelled, res.Cancelled, "cancelled")
			for i, rr := range res.Rules {
				assert.Equal(t, tt.leaked[i], rr.Leaked, "%v: leaked", rr.Rule)
			}
		})
	}
}

// TestAskOrder: Config.Order names the limiter a call meets first. Two
// callers at once under 5/1s, 1/1h, each giving up after 1 s: asked in
// the rules' order, the second spends a token of 5/1s and then gives up
// on the hour; asked hour first, it gives up before 5/1s sees it.
func TestAskOrder(t *testing.T) {
	for _, name := range []string{catalog.XRateChained, catalog.ThrottledMem} {
		for _, tt := range []struct {
			order  []int
			leaked []int64
		}{
			{nil, []int64{1, 0}},
			{[]int{0, 1}, []int64{1, 0}},
			{[]int{1, 0}, []int64{0, 0}},
		} {
			res := exact(t, name, "5/1s,1/1h", libs.Config{Order: tt.order}, 0, workload.Arrivals{Kind: workload.AllAtOnce}, 2, time.Second)
			require.Len(t, res.Sends, 1, name)
			got := []int64{res.Rules[0].Leaked, res.Rules[1].Leaked}
			assert.Equal(t, tt.leaked, got, "%s, order %v: tokens kept with nothing sent", name, tt.order)
		}
	}
	assert.Error(t, libs.Config{Order: []int{0, 0}}.Validate())
	assert.Error(t, libs.Config{Order: []int{1, 2}}.Validate())
	assert.NoError(t, libs.Config{Order: []int{1, 0}}.Validate())
}

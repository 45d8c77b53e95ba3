package libs_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// TestXRateChainedWaitsForTokens: the chained x/time/rate limiter charges
// each rule's limiter the call's cost in its unit (WaitN), so a second call
// of 60 tokens under 100 tokens/1s waits for 20 tokens to refill, and a
// call of more tokens than the burst is refused at once.
func TestXRateChainedWaitsForTokens(t *testing.T) {
	rules, err := rule.ParseList("10/1s, 100 tokens/1s")
	require.NoError(t, err)
	sch := virtual.NewSched(virtual.Config{})
	lim := libs.NewXRateChained(sch, rules, libs.Default())
	var at []int64
	var errs []error
	sch.Arrivals([]int64{0, 0, 0}, func(i int64) {
		err := lim.AcquireCost(context.Background(), [][]int64{{60}, {60}, {101}}[i])
		errs = append(errs, err)
		if err == nil {
			at = append(at, sch.Now())
		}
	})
	sch.Run()
	require.Len(t, at, 2)
	assert.Equal(t, int64(0), at[0])
	assert.Equal(t, int64(200*time.Millisecond), at[1])
	var ce *strategies.CostError
	assert.ErrorAs(t, errs[1], &ce) // the third caller is refused before the second is admitted
	assert.Equal(t, int64(101), ce.Cost)
}

package ulule_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/internal/specimens/libs/ulule"
	"github.com/rlcheck/rlcheck/rule"
)

// TestMemoryStoreStraddle drives the memory store, which reads time.Now,
// on testing/synctest's fake clock: "5 per second" lets 4 calls through
// 10 ms before the end of the window the first call opened and 5 more as
// soon as it has ended, 9 in one second; a call at the window's very end
// is still refused (the store counts [t0, t0+W] closed).
func TestMemoryStoreStraddle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := rule.Rule{Limit: 5, Window: time.Second}
		// No cleaner goroutine, so the bubble can end.
		store := memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "t"})
		lim := limiter.New(store, ulule.Rate(r, libs.Config{}))
		start := time.Now()
		var sends []int64
		hit := func(n int) (admitted int) {
			for range n {
				c, err := lim.Get(context.Background(), "k")
				require.NoError(t, err)
				if !c.Reached {
					sends = append(sends, int64(time.Since(start)))
					admitted++
				}
			}
			return admitted
		}
		assert.Equal(t, 1, hit(1), "at 0")
		time.Sleep(990 * time.Millisecond)
		assert.Equal(t, 4, hit(5), "at 990 ms")
		time.Sleep(10 * time.Millisecond)
		assert.Equal(t, 0, hit(1), "at 1 s, the window's end")
		time.Sleep(time.Nanosecond)
		assert.Equal(t, 5, hit(5), "1 ns after the window's end")
		rep, err := checker.Check(sends, checker.Config{Rules: []rule.Rule{r}})
		require.NoError(t, err)
		assert.Equal(t, int64(9), rep.Rules[0].MaxInWindow, "most sends in one second: 2N-1")
	})
}

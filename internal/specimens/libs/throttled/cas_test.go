package throttled

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// losing is a store whose compare-and-swap loses lose times, as it does to
// concurrent callers on one key.
type losing struct {
	throttled.GCRAStoreCtx
	lose int
}

func (l *losing) CompareAndSwapWithTTL(ctx context.Context, key string, old, new int64, ttl time.Duration) (bool, error) {
	if l.lose > 0 {
		l.lose--
		return false, nil
	}
	return l.GCRAStoreCtx.CompareAndSwapWithTTL(ctx, key, old, new, ttl)
}

// TestCASLostAsksAgain: throttled returns an error after ten lost
// compare-and-swaps on a contended key (seen with 30 callers in rlcheck
// run); the caller asks again instead of failing the run.
func TestCASLostAsksAgain(t *testing.T) {
	mem, err := memstore.NewCtx(16)
	require.NoError(t, err)
	st := &losing{GCRAStoreCtx: mem}
	rules := []rule.Rule{{Limit: 5, Window: time.Second}}
	lim, err := chain(clock.NewReal(), st, rules, libs.Default(), "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, lim.Acquire(ctx), "first call: an entry to swap")
	st.lose = 25
	assert.NoError(t, lim.Acquire(ctx), "after 25 lost swaps")
	assert.Zero(t, st.lose, "swaps left to lose")
	assert.Equal(t, []int64{2}, lim.Stats().Records, "admissions")
}

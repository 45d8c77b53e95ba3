package realrun

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// TestRedisOutOfOrderInstants replays, one call at a time, what concurrent
// callers on the real clock can do to the redis strategy with a
// caller-supplied clock: a call whose instant was read earlier reaches the
// script after a newer call has swept the set. The records must still keep
// the rule: the sweep keeps entries long enough for such a call.
func TestRedisOutOfOrderInstants(t *testing.T) {
	emb, err := embedded.Start()
	require.NoError(t, err)
	defer emb.Close()
	rules := []rule.Rule{{Limit: 5, Window: 50 * time.Millisecond}}
	var now int64
	lim, err := redislimit.New(emb, clock.NewReal(), rules,
		redislimit.Options{Key: "order", TimeSource: redislimit.Virtual, Now: func() int64 { return now }})
	require.NoError(t, err)
	var recs []int64
	for _, at := range []time.Duration{0, 0, 0, 0, 0, 60 * time.Millisecond, 30 * time.Millisecond} {
		now = int64(at)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		r, err := lim.AcquireAt(ctx)
		cancel()
		if err == nil {
			recs = append(recs, r)
		}
	}
	sorted := slices.Sorted(slices.Values(recs))
	rep, err := checker.Check(sorted, checker.Config{Rules: rules})
	require.NoError(t, err)
	assert.Zero(t, rep.Violations(), "records %v break 5/50ms", recs)
}

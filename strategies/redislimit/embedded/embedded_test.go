package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// TestStartRunsTheScript: the embedded server runs the admission script,
// and Close stops it.
func TestStartRunsTheScript(t *testing.T) {
	c, err := Start()
	require.NoError(t, err)
	l, err := redislimit.New(c, clock.NewReal(), []rule.Rule{{Limit: 10, Window: time.Hour}}, redislimit.Options{Key: "emb"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.NoError(t, l.Acquire(ctx))
	require.NoError(t, l.Acquire(ctx))
	assert.Equal(t, []int64{2}, l.Stats().Records)
	assert.Positive(t, c.(*embedded).fast.Served(), "the fast path served no script run")
	require.NoError(t, c.Close())
	assert.Error(t, l.Acquire(ctx), "a call after Close")
}

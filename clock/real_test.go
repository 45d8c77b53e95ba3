package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRealEndedContextTakesNothing(t *testing.T) {
	rt := NewReal()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sem := rt.NewSemaphore(1)
	require.Error(t, sem.Acquire(ctx), "a cancelled context acquired a free slot")
	assert.Error(t, rt.NewMutex().Lock(ctx), "a cancelled context took a free lock")
	// The slot is still free for a live caller.
	assert.NoError(t, sem.Acquire(context.Background()), "the slot a cancelled caller was refused is not free")
	assert.Error(t, rt.Sleep(ctx, time.Hour), "Sleep on a cancelled context returned nil")
}

func TestRealSemaphoreWaitsInOrder(t *testing.T) {
	rt := NewReal()
	sem := rt.NewSemaphore(1)
	require.NoError(t, sem.Acquire(context.Background()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.Error(t, sem.Acquire(ctx), "acquired a slot that was held")
	sem.Release()
	assert.NoError(t, sem.Acquire(context.Background()), "the released slot")
}

// TestLeftReadsTheContextDeadline: on the wall clock, the time left is the
// context's deadline less now, and a context without one has none.
func TestLeftReadsTheContextDeadline(t *testing.T) {
	rt := NewReal()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	left, ok := Left(ctx, rt)
	assert.True(t, ok)
	assert.InDelta(t, float64(time.Hour), float64(left), float64(time.Minute))
	_, ok = Left(context.Background(), rt)
	assert.False(t, ok)
}

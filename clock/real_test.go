package clock

import (
	"context"
	"testing"
	"time"
)

func TestRealEndedContextTakesNothing(t *testing.T) {
	rt := NewReal()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sem := rt.NewSemaphore(1)
	if err := sem.Acquire(ctx); err == nil {
		t.Fatal("a cancelled context acquired a free slot")
	}
	if err := rt.NewMutex().Lock(ctx); err == nil {
		t.Fatal("a cancelled context took a free lock")
	}
	// The slot is still free for a live caller.
	if err := sem.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rt.Sleep(ctx, time.Hour); err == nil {
		t.Fatal("Sleep on a cancelled context returned nil")
	}
}

func TestRealSemaphoreWaitsInOrder(t *testing.T) {
	rt := NewReal()
	sem := rt.NewSemaphore(1)
	if err := sem.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := sem.Acquire(ctx); err == nil {
		t.Fatal("acquired a slot that was held")
	}
	sem.Release()
	if err := sem.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
}

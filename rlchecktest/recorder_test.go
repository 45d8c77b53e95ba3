package rlchecktest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

func TestRecorderConcurrent(t *testing.T) {
	var rec rlchecktest.Recorder
	var wg sync.WaitGroup
	boom := errors.New("boom")
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				assert.Same(t, boom, rec.Record(func() error { return boom }), "Record returned something else than f's error")
			}
		}()
	}
	wg.Wait()
	sends := rec.Sends()
	require.Len(t, sends, 1000, "Sends")
	require.Equal(t, 1000, rec.Len(), "Len")
	require.IsNonDecreasing(t, sends, "Sends is not in time order")
	var ft fakeTB
	require.False(t, rec.AssertCompliant(&ft, rule.Rule{Limit: 10, Window: time.Hour}), "1000 sends passed 10/1h")
	rec.Reset()
	assert.Zero(t, rec.Len(), "Reset kept sends")
}

func TestRecorderTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var rec rlchecktest.Recorder
	client := &http.Client{Transport: rec.Transport(srv.Client().Transport)}
	for range 3 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	}
	// A request that never gets an answer was still sent, as far as the
	// recorder can tell, and counts.
	bad := &http.Client{Transport: rec.Transport(failing{})}
	_, err := bad.Get("http://example.invalid/")
	require.Error(t, err, "failing transport succeeded")
	require.Equal(t, 4, rec.Len(), "sends recorded")
	var ft fakeTB
	ok := rec.AssertCompliant(&ft, rule.Rule{Limit: 4, Window: time.Minute})
	require.True(t, ok, "4 sends failed 4/1m: %q", ft.errors)
	assert.False(t, rec.AssertCompliant(&ft, rule.Rule{Limit: 3, Window: time.Minute}), "4 sends passed 3/1m")
}

type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}

// TestRecorderChecksTheInFlightCap: calls through a gated limiter of 2
// slots are never more than 2 in flight, and reach 2; the same calls
// without it are 6 in flight at once, which the assertion reports.
func TestRecorderChecksTheInFlightCap(t *testing.T) {
	run := func(gate func(func() error) error) *rlchecktest.Recorder {
		var rec rlchecktest.Recorder
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				require.NoError(t, gate(func() error {
					return rec.Record(func() error { time.Sleep(20 * time.Millisecond); return nil })
				}))
			}()
		}
		close(start)
		wg.Wait()
		return &rec
	}
	lim := strategies.NewRealGated(2)
	rec := run(func(f func() error) error { return lim.Do(context.Background(), f) })
	most, _ := rec.MaxInFlight()
	assert.Equal(t, 2, most)
	assert.True(t, rec.AssertInFlight(t, 2))

	rec = run(func(f func() error) error { return f() })
	most, _ = rec.MaxInFlight()
	assert.Equal(t, 6, most, "six calls sleeping 20 ms at once")
	var ft fakeTB
	assert.False(t, rec.AssertInFlight(&ft, 2))
	require.Len(t, ft.errors, 1)
	assert.Contains(t, ft.errors[0], "6 calls in flight")
}

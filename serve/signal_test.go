//go:build unix

package serve

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestSIGINTEndsWithTheReport stops Run the way the command does: SIGINT
// ends the context, the requests in progress are still answered, and the
// verdict is written.
func TestSIGINTEndsWithTheReport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		res, err := Run(ctx, Config{
			Options: Options{
				Rules: []rule.Rule{{Limit: 2, Window: time.Minute}}, Latency: fixed(time.Second), MetricsPath: "/metrics",
			},
			Judge: judgeLog, Listener: ln, Out: &out,
		})
		if err == nil {
			assert.Equal(t, int64(1), res.Violations())
		}
		done <- err
	}()
	url := "http://" + ln.Addr().String() + "/"
	slow := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Get(url)
			if !assert.NoError(t, err) {
				slow <- 0
				return
			}
			resp.Body.Close()
			slow <- resp.StatusCode
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, body := get(t, http.DefaultClient, url+"metrics")
		if bytes.Contains(body, []byte("rlcheck_serve_in_flight 2")) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the two slow requests never arrived")
	}
	resp, _ := get(t, http.DefaultClient, url)
	assert.Equal(t, 429, resp.StatusCode)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	require.NoError(t, <-done)
	assert.Equal(t, 200, <-slow, "answered after the signal")
	assert.Equal(t, 200, <-slow)
	assert.Contains(t, out.String(), "requests: 3 sends")
	assert.Contains(t, out.String(), "FAIL: 1 violation (")
}

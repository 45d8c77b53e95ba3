package redislimit_test

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// startEmbedded starts the in-process server simulations run on, with
// its script fast path (one Lua state kept between runs).
func startEmbedded(t *testing.T) redislimit.Conn {
	t.Helper()
	c, err := embedded.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestEmbeddedCorruptStatesRefused runs the corrupt states of
// TestCorruptStatesRefused on the embedded server's fast path.
func TestEmbeddedCorruptStatesRefused(t *testing.T) {
	redislimit.CheckCorruptStates(t, startEmbedded(t))
}

// TestEmbeddedAgainstOracle runs the differential property of
// TestAgainstOracle on the embedded server's fast path: as simulations
// start it, with the caller's clocks, and installed on a miniredis whose
// TIME the test sets, with Server time too.
func TestEmbeddedAgainstOracle(t *testing.T) {
	t.Parallel()
	callers := []redislimit.TimeSource{redislimit.Client, redislimit.Virtual}
	t.Run("embedded.Start", func(t *testing.T) { redislimit.CheckAgainstOracle(t, startEmbedded(t), nil, callers, 25) })
	t.Run("embedded.Install", func(t *testing.T) {
		m := miniredis.RunT(t)
		c := embedded.PipeClient(m)
		t.Cleanup(func() { _ = c.Close() })
		fast, err := embedded.Install(c, m)
		require.NoError(t, err)
		t.Cleanup(fast.Close)
		redislimit.CheckAgainstOracle(t, c, m, []redislimit.TimeSource{redislimit.Server}, 25)
		require.Positive(t, fast.Served(), "the fast path served no run")
	})
}

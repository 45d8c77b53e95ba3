package redislimit_test

import (
	"testing"

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

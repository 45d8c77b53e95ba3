package redislimit

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
)

// TestNewRefusesKinds: the script keeps sliding windows only, so a rule of
// another kind is refused by name rather than kept as a sliding rule.
func TestNewRefusesKinds(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { _ = c.Close() })
	for _, s := range []string{"10/1s fixed", "10/1s burst 4", "10/1s first-call"} {
		r, err := rule.Parse(s)
		require.NoError(t, err)
		_, err = New(c, clock.NewReal(), []rule.Rule{{Limit: 5, Window: 1e9}, r}, Options{Key: "k"})
		assert.EqualError(t, err, "redislimit: rule "+s+": the script keeps sliding rules only so far (strategies.NewCombined keeps every kind)")
	}
}

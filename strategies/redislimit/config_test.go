package redislimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// mustRules parses rules written as in a contract.
func mustRules(t *testing.T, s string) []rule.Rule {
	t.Helper()
	rules, err := rule.ParseList(s)
	require.NoError(t, err)
	return rules
}

// TestOneKeyOneConfiguration: two limiters of one key under
// 3/1s, one built with Widen(5ms) and one with Widen(10ms), kept two sets
// of different windows and admitted 6 calls in 1.6 ms between them. A
// limiter whose configuration differs from the one the key's state was
// made with is now refused with ErrConfig naming both, and records
// nothing.
func TestOneKeyOneConfiguration(t *testing.T) {
	for name, c := range stores(t) {
		t.Run(name, func(t *testing.T) {
			rt := &stepRT{t: epoch}
			rules := mustRules(t, "3/1s")
			mk := func(margin time.Duration) *Limiter {
				l, err := New(c, rt, strategies.Widen(margin, rules...), Options{Key: "split", TimeSource: Virtual})
				require.NoError(t, err)
				return l
			}
			a, b := mk(5*time.Millisecond), mk(10*time.Millisecond)
			admitted := 0
			for i := range 8 {
				rt.t = epoch + int64(i)*200_000 // 0 to 1.4 ms
				for _, l := range []*Limiter{a, b} {
					wait, _, _, err := l.try(context.Background(), fmt.Sprintf("m%d", i), false)
					if err != nil {
						require.ErrorIs(t, err, ErrConfig)
						assert.ErrorContains(t, err, a.Config())
						assert.ErrorContains(t, err, b.Config())
						continue
					}
					if wait == 0 {
						admitted++
					}
				}
			}
			assert.Equal(t, 3, admitted, "admitted under 3/1s by two limiters of one key")
		})
	}
}

// configPairs are limiters of one key whose budgets would split or whose
// decisions would differ: the second of each is refused while the first
// keeps the key.
var configPairs = []struct {
	name   string
	a, b   string
	margin [2]time.Duration
	source [2]TimeSource
}{
	{"sliding margins", "3/1s", "3/1s", [2]time.Duration{5 * time.Millisecond, 10 * time.Millisecond}, [2]TimeSource{}},
	{"fixed margins", "3/1s fixed", "3/1s fixed", [2]time.Duration{5 * time.Millisecond, 10 * time.Millisecond}, [2]TimeSource{}},
	{"bucket margins", "3/1s burst 5", "3/1s burst 5", [2]time.Duration{0, time.Millisecond}, [2]TimeSource{}},
	{"a cost rule missing", "3/1s, 10 tokens/1s", "3/1s", [2]time.Duration{}, [2]TimeSource{}},
	{"limits", "3/1s", "4/1s", [2]time.Duration{}, [2]TimeSource{}},
	{"units", "10 tokens/1s", "10 bytes/1s", [2]time.Duration{}, [2]TimeSource{}},
	{"bookkeeping", "100/1m:exact", "100/1m", [2]time.Duration{}, [2]TimeSource{}},
	{"bucket counts", "100/1m:b16", "100/1m:b64", [2]time.Duration{}, [2]TimeSource{}},
	{"fixed offsets", "3/1s fixed", "3/1s fixed at 500ms", [2]time.Duration{}, [2]TimeSource{}},
	{"time sources", "3/1s", "3/1s", [2]time.Duration{}, [2]TimeSource{Client, Virtual}},
}

// TestConfigurationsRefused: for each pair, the first limiter's state
// refuses the second, with both configurations named and nothing
// recorded, on exact, bucketed and kind rules alike; after Reset the
// second may claim the key, and then the first is refused.
func TestConfigurationsRefused(t *testing.T) {
	for name, c := range stores(t) {
		for i, tc := range configPairs {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				rt := &stepRT{t: epoch}
				key := fmt.Sprintf("pair-%d", i)
				mk := func(j int, s string) *Limiter {
					rules := strategies.Widen(tc.margin[j], mustRules(t, s)...)
					src := tc.source[j]
					if src == Server {
						src = Virtual
					}
					l, err := New(c, rt, rules, Options{Key: key, TimeSource: src, MaxSkew: -1})
					require.NoError(t, err)
					return l
				}
				a, b := mk(0, tc.a), mk(1, tc.b)
				require.NotEqual(t, a.Config(), b.Config())
				ctx := context.Background()
				require.NoError(t, a.AcquireCost(ctx, a.ones))
				n := headCount(t, c, a)
				err := b.AcquireCost(ctx, b.ones)
				require.ErrorIs(t, err, ErrConfig)
				assert.ErrorContains(t, err, a.Config())
				assert.ErrorContains(t, err, b.Config())
				assert.Equal(t, n, headCount(t, c, a), "the refused call was counted")
				require.NoError(t, a.AcquireCost(ctx, a.ones), "the key's own configuration goes on")

				require.NoError(t, Reset(ctx, c, key, append(a.Rules(), b.Rules()...)))
				require.NoError(t, b.AcquireCost(ctx, b.ones), "after Reset the new configuration claims the key")
				assert.ErrorIs(t, a.AcquireCost(ctx, a.ones), ErrConfig)
			})
		}
	}
}

// TestSameConfigurationShares: limiters given the same rules in another
// order share one budget.
func TestSameConfigurationShares(t *testing.T) {
	c := newClient(t)
	rt := &stepRT{t: epoch}
	a, err := New(c, rt, mustRules(t, "3/1s, 100/1m, 5/1s fixed"), Options{Key: "same", TimeSource: Virtual})
	require.NoError(t, err)
	b, err := New(c, rt, mustRules(t, "5/1s fixed, 100/1m, 3/1s"), Options{Key: "same", TimeSource: Virtual})
	require.NoError(t, err)
	assert.Equal(t, "virtual time: 100/1m:b64, 3/1s:exact, 5/1s fixed", a.Config())
	assert.Equal(t, a.Config(), b.Config())
	for i, l := range []*Limiter{a, b, a} {
		wait, _, _, err := l.try(context.Background(), fmt.Sprintf("s%d", i), false)
		require.NoError(t, err)
		require.Zero(t, wait)
	}
	wait, _, _, err := b.try(context.Background(), "s-full", false)
	require.NoError(t, err)
	assert.Equal(t, time.Second, wait, "the fourth call of either waits")
}

// headCount reads the head's count n of l's key.
func headCount(t *testing.T, c redis.Scripter, l *Limiter) string {
	t.Helper()
	n, err := c.(redis.Cmdable).HGet(context.Background(), l.script[0], "n").Result()
	require.NoError(t, err)
	return n
}

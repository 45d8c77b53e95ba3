package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
	"github.com/rlcheck/rlcheck/internal/testrun"
)

// TestSimulateRedisKeysStayBounded: `rlcheck simulate` with the
// redis strategy past the day's limit, at saturation and spaced just
// under the day's pace, on a real redis-server: the limiter's keys (rule
// keys, expiry marker and sentinel, MEMORY USAGE SAMPLES 0 summed) hold
// at most 4 KB and no rule is broken. Every day the rules are 10/s,
// 500/min, 1000/day with 1,200 callers spaced 86.5 s apart; with
// RLCHECK_FULL=1, 10000/day with 20,000 callers spaced 8.65 s. The exact
// sets of the same rules (redis-exact) hold 129 KB and over 2 MB.
func TestSimulateRedisKeysStayBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("two simulations past the day's limit")
	}
	t.Parallel()
	day, callers, every := "1000/day", "1200", "86.5s"
	if testrun.Full() {
		day, callers, every = "10000/day", "20000", "8.65s"
	}
	s := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	dir := t.TempDir()
	for _, tc := range []struct{ name, arrivals string }{
		{"saturated", "  pattern: all-at-once\n"},
		{"spaced", "  pattern: interval\n  every: " + every + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name+".yaml")
			require.NoError(t, os.WriteFile(file, []byte("name: mem-"+tc.name+"\nrules: [10/s, 500/min, "+day+"]\n"+
				"strategies: [redis]\ncallers: "+callers+"\narrivals:\n"+tc.arrivals+"seed: 1\n"), 0o644))
			out, errOut, code := run(t, "", "simulate", file, "--redis-url", "redis://"+s.Addr+"/0")
			require.Equal(t, exitOK, code, "stderr %q\n%s", errOut, out)
			var row []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == "redis" && row == nil {
					row = f
				}
			}
			require.Len(t, row, 7, "the redis row of:\n%s", out)
			assert.Equal(t, []string{"0", "0", "0"}, row[4:], "violations per rule:\n%s", out)
			keys, err := c.Keys(context.Background(), "rlcheck:{rlcheck:mem-"+tc.name+":*").Result()
			require.NoError(t, err)
			require.NotEmpty(t, keys)
			var used int64
			for _, k := range keys {
				n, err := c.MemoryUsage(context.Background(), k, 0).Result()
				if err == redis.Nil {
					continue // the expiry marker, lapsed
				}
				require.NoError(t, err, k)
				used += n
			}
			t.Logf("%s: %d bytes in %d keys %v", tc.name, used, len(keys), keys)
			assert.LessOrEqual(t, used, int64(4096))
		})
	}
}

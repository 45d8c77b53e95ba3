package embedded_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// BenchmarkAdmit is one admit.lua run (one exact and one bucketed rule,
// virtual time, every call admitted) through a go-redis client of
// miniredis: "miniredis" sends EVALSHA over loopback TCP, where miniredis
// builds a Lua state for the run; "fast" has the fast path. `go test
// ./strategies/redislimit/embedded -run X -bench Admit`.
func BenchmarkAdmit(b *testing.B) {
	for _, fast := range []bool{false, true} {
		name := "miniredis"
		if fast {
			name = "fast"
		}
		b.Run(name, func(b *testing.B) {
			m := miniredis.RunT(b)
			c := redis.NewClient(&redis.Options{Addr: m.Addr()})
			defer c.Close()
			if fast {
				s, err := embedded.Install(c, m)
				require.NoError(b, err)
				defer s.Close()
			}
			var now int64
			rt := runtime{&now, new(int64)}
			rules := []rule.Rule{{Limit: 10, Window: 100 * time.Millisecond}, {Limit: 100000, Window: time.Hour, Buckets: 64}}
			l, err := redislimit.New(c, rt, rules, redislimit.Options{Key: "bench", TimeSource: redislimit.Virtual, MemberPrefix: "b:", CallTimeout: -1})
			require.NoError(b, err)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				now += int64(20 * time.Millisecond)
				if err := l.Acquire(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package redislimit

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Warnings asks the server (CONFIG GET maxmemory-policy) whether it may
// evict a limiter's keys, and returns what a user should be told; call it
// once when setting up, as rlcheck simulate does after Dial, and log the
// result. Without a deadline on ctx it gives Redis DefaultTimeout. Every
// allkeys-* policy and every volatile-* one (the keys have expiries) may
// drop a set that holds admissions, and the limiter then lets calls
// through that overfill the window. A server that refuses CONFIG (renamed,
// ACL, a managed service) or another failure yields no warning: the
// limiter's own calls report a server that is really gone.
func Warnings(ctx context.Context, c redis.Scripter) []string {
	d, ok := c.(interface {
		Do(ctx context.Context, args ...any) *redis.Cmd
	})
	if !ok {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	res, err := d.Do(ctx, "CONFIG", "GET", "maxmemory-policy").Result()
	if err != nil {
		return nil
	}
	policy := configValue(res, "maxmemory-policy")
	if strings.HasPrefix(policy, "allkeys-") || strings.HasPrefix(policy, "volatile-") {
		return []string{fmt.Sprintf("redislimit: the server's maxmemory-policy is %s: when Redis reaches maxmemory it may evict the limiter's keys, and calls admitted after that may overfill their windows; use noeviction for the limiter's Redis", policy)}
	}
	return nil
}

// configValue reads one parameter from a CONFIG GET reply: a map under
// RESP3, a flat name, value list under RESP2.
func configValue(res any, name string) string {
	switch v := res.(type) {
	case map[any]any:
		s, _ := v[name].(string)
		return s
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			if k, _ := v[i].(string); k == name {
				s, _ := v[i+1].(string)
				return s
			}
		}
	}
	return ""
}

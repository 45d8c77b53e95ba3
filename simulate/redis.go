package simulate

import (
	"context"
	"errors"
	"fmt"

	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// newRedis builds one worker's limiter of the redis strategy: each worker
// stands for a process of its own, and all share the run's key. Server time
// is simulated by the run's unskewed clock; client time is the worker's
// skewed view.
func newRedis(e Env, src redislimit.TimeSource) (strategies.Limiter, error) {
	if e.Shared.Redis == nil {
		return nil, errors.New("no Redis to run on")
	}
	if e.Worker == 0 {
		// A real server may still hold this run's keys from an earlier run.
		if err := redislimit.Reset(context.Background(), e.Shared.Redis, e.Shared.Key, e.Rules); err != nil {
			return nil, err
		}
	}
	opts := redislimit.Options{Key: e.Shared.Key, TimeSource: src, MemberPrefix: fmt.Sprintf("w%d:", e.Worker)}
	if src == redislimit.Virtual {
		opts.Now = e.Shared.Now
	}
	opts.MaxSkew = -1 // client time here is a simulated clock, not the host's
	return redislimit.New(e.Shared.Redis, e.Runtime, e.Rules, opts)
}

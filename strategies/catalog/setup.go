package catalog

import (
	"io"
	"slices"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/workload"
)

// Limiters builds st's limiters for the workers of s, runtime(w) being
// worker w's clock: one per worker for a PerWorker strategy, otherwise one
// built with worker 0's Env that every worker shares, as if the workers
// were one process. The simulator and the real-clock runner both build
// their limiters here, so that a prediction runs the limiters a real run
// runs. Close them with CloseLimiters, after an error too: the ones built
// before it are in the slice.
func Limiters(s *workload.Scenario, st Strategy, shared *Shared, runtime func(w int) clock.Runtime) ([]strategies.Limiter, error) {
	limiters := make([]strategies.Limiter, s.Workers)
	for w := range s.Workers {
		if !st.PerWorker && w > 0 {
			limiters[w] = limiters[0]
			continue
		}
		lim, err := st.New(LimiterEnv(s, w, runtime(w), shared))
		if err != nil {
			return limiters, err
		}
		limiters[w] = lim
	}
	return limiters, nil
}

// CloseLimiters closes, once each, the limiters that hold a resource of
// their own (an io.Closer, such as a Redis-backed library's embedded
// server), when their run is over.
func CloseLimiters(limiters []strategies.Limiter) {
	for i, lim := range limiters {
		if c, ok := lim.(io.Closer); ok && !slices.Contains(limiters[:i], lim) {
			_ = c.Close()
		}
	}
}

package realrun

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

// TestRedisOutOfOrderInstants replays, one call at a time, what concurrent
// callers on the real clock can do to the redis strategy with a
// caller-supplied clock: a call whose instant was read earlier reaches the
// script after a newer call has swept the set. The records must still keep
// the rule: the sweep keeps entries long enough for such a call.
func TestRedisOutOfOrderInstants(t *testing.T) {
	emb, err := embedded.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	rules := []rule.Rule{{Limit: 5, Window: 50 * time.Millisecond}}
	var now int64
	lim, err := redislimit.New(emb, clock.NewReal(), rules,
		redislimit.Options{Key: "order", TimeSource: redislimit.Virtual, Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var recs []int64
	for _, at := range []time.Duration{0, 0, 0, 0, 0, 60 * time.Millisecond, 30 * time.Millisecond} {
		now = int64(at)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		r, err := lim.AcquireAt(ctx)
		cancel()
		if err == nil {
			recs = append(recs, r)
		}
	}
	sorted := slices.Sorted(slices.Values(recs))
	rep, err := checker.Check(sorted, checker.Config{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Violations() != 0 {
		t.Fatalf("records %v break 5/50ms %d times", recs, rep.Violations())
	}
}

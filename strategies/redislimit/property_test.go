package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// workload is one seeded case: rules with distinct windows and arrival
// offsets in whole microseconds, ties and gaps of exactly a window included.
type workload struct {
	rules    []rule.Rule
	arrivals []int64 // ns after epoch, ascending
}

func newWorkload(seed uint64) workload {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var w workload
	windows := []time.Duration{}
	for range 1 + r.IntN(3) {
		win := time.Duration(1+r.IntN(3000)) * time.Millisecond
		if r.IntN(3) == 0 {
			win += time.Duration(r.IntN(1000)) * time.Microsecond
		}
		if slices.Contains(windows, win) {
			continue
		}
		windows = append(windows, win)
		w.rules = append(w.rules, rule.Rule{Limit: 1 + r.IntN(6), Window: win})
	}
	t := int64(0)
	for range 15 + r.IntN(30) {
		switch r.IntN(5) {
		case 0: // a tie with the previous arrival
		case 1: // exactly one window later
			t += int64(w.rules[r.IntN(len(w.rules))].Window)
		default:
			t += int64(r.IntN(400_000)) * 1000
		}
		w.arrivals = append(w.arrivals, t)
	}
	return w
}

// reference is the exact sliding log for one caller: a send goes at its
// arrival, or when the Limit-th latest send of every rule has left its
// window, whichever is later.
func (w workload) reference() []int64 {
	var sends []int64
	for _, a := range w.arrivals {
		t := a
		if n := len(sends); n > 0 {
			t = max(t, sends[n-1])
		}
		for _, r := range w.rules {
			if n := len(sends); n >= r.Limit {
				t = max(t, sends[n-r.Limit]+int64(r.Window))
			}
		}
		sends = append(sends, t)
	}
	return sends
}

// runs is how many script runs a single caller needs for sends: two for a
// call that had to wait, one for the others.
func (w workload) runs(sends []int64) int64 {
	n := int64(len(sends))
	for i, s := range sends {
		ready := w.arrivals[i]
		if i > 0 {
			ready = max(ready, sends[i-1])
		}
		if s > ready {
			n++
		}
	}
	return n
}

// drive sends the workload through l on rt, one caller, and returns the
// send instants (ns after epoch).
func (w workload) drive(t *testing.T, rt *stepRT, l interface {
	Acquire(context.Context) error
}) []int64 {
	t.Helper()
	var sends []int64
	for _, a := range w.arrivals {
		if rt.t < epoch+a {
			rt.set(epoch + a)
		}
		require.NoError(t, l.Acquire(context.Background()))
		sends = append(sends, rt.t-epoch)
	}
	return sends
}

// TestMatchesCombinedAndReference: the script and the in-memory combined
// strategy give the same send times, to the µs, as the exact sliding log;
// and those sends break no rule.
func TestMatchesCombinedAndReference(t *testing.T) {
	t.Parallel()
	for seed := range seeds(10, 30) {
		w := newWorkload(seed)
		want := w.reference()
		rep, err := checker.Check(want, checker.Config{Rules: w.rules})
		require.NoError(t, err)
		require.Zero(t, rep.Violations(), "seed %d: the reference breaks its rules", seed)

		rt := &stepRT{t: epoch}
		got := w.drive(t, rt, strategies.NewCombined(rt, w.rules...))
		require.Equal(t, want, got, "seed %d rules %v: combined against the reference", seed, w.rules)

		for _, src := range []TimeSource{Server, Client, Virtual} {
			m, c := newMini(t)
			rt := &stepRT{t: epoch}
			if src == Server {
				rt.onAdvance = func(now int64) { m.SetTime(time.Unix(0, now)) }
				rt.set(epoch)
			}
			l, err := New(c, rt, w.rules, Options{Key: fmt.Sprintf("w%d", seed), TimeSource: src, MemberPrefix: "p:", MaxSkew: -1})
			require.NoError(t, err)
			got := w.drive(t, rt, l)
			require.Equal(t, want, got, "seed %d %v rules %v: redis against the reference", seed, src, w.rules)
			require.Equal(t, int64(len(want)), l.Stats().Records[0], "seed %d: records", seed)
			// One run per call, plus one after the sleep of each call that
			// waited: the longest wait is always enough.
			require.Equal(t, w.runs(want), l.Runs(), "seed %d %v: script runs", seed, src)
		}
	}
}

// TestReferenceCatchesAFirstRuleWait guards the property test itself: a
// limiter that waited only for the first full rule would differ from it.
func TestReferenceCatchesAFirstRuleWait(t *testing.T) {
	w := workload{
		rules:    []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 1, Window: 3 * time.Second}},
		arrivals: []int64{0, 0},
	}
	assert.Equal(t, int64(3*time.Second), w.reference()[1], "the second send")
}

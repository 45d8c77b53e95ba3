package realrun

import (
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// WakeDelays measures, for each send that had to wait for a window, how
// long after the earliest lawful instant it went out: the instant the
// binding rule's oldest entry left the window, given the sends before it.
// On a log of a check-every-rule limiter this is timer lateness plus
// scheduling and bookkeeping, the figure the simulator's lateness models;
// a negative delay is a send too early, a violation. Sends must be in time
// order. The figure means what it says while callers queue (they all
// arrived before the window freed); after an idle gap it also counts the
// wait for the next arrival. Only sliding call rules free at such an
// instant; the others are left out.
func WakeDelays(sends []int64, rules []rule.Rule) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(sends); i++ {
		free, bound := int64(0), false
		for _, r := range rules {
			if r.SlidingCalls() && i >= r.Limit {
				if e := sends[i-r.Limit] + int64(r.Window); !bound || e > free {
					free, bound = e, true
				}
			}
		}
		if bound && free >= sends[i-1] {
			out = append(out, time.Duration(sends[i]-free))
		}
	}
	return out
}

// Spread summarises durations by nearest rank.
type Spread struct {
	N   int           `json:"n"`
	Min time.Duration `json:"min"`
	P50 time.Duration `json:"p50"`
	P95 time.Duration `json:"p95"`
	Max time.Duration `json:"max"`
}

// SpreadOf returns the spread of d (zero when d is empty).
func SpreadOf(d []time.Duration) Spread {
	if len(d) == 0 {
		return Spread{}
	}
	v := slices.Clone(d)
	slices.Sort(v)
	at := func(p int) time.Duration { return v[max((p*len(v)+99)/100, 1)-1] }
	return Spread{N: len(v), Min: v[0], P50: at(50), P95: at(95), Max: v[len(v)-1]}
}

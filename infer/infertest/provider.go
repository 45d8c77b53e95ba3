// Package infertest is a provider for tests of contract inference: it
// replays a hidden contract of sliding or fixed rules over probing
// traffic, and marks each call 200 or 429. It is written apart from
// package infer, by scanning back over the calls it counted.
package infertest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Provider replays a hidden contract: it refuses a call when any rule's
// window already holds Limit counted calls, and counts refused calls
// toward later windows only when refusedCount is set. It is written apart
// from the package's passes, by scanning back over the calls it counted.
type Provider struct {
	rules        []rule.Rule
	refusedCount bool
	counted      []int64
	// Alone[k] counts the calls rule k refused that no other rule would.
	Alone []int
	// Any[k] counts the calls rule k refused.
	Any []int
}

// NewProvider returns a provider keeping rules.
func NewProvider(rules []rule.Rule, refusedCount bool) *Provider {
	return &Provider{rules: rules, refusedCount: refusedCount, Alone: make([]int, len(rules)), Any: make([]int, len(rules))}
}

// InWindow reports whether an earlier call at s is in rule r's window for
// a call at t.
func InWindow(r rule.Rule, s, t int64) bool {
	w := int64(r.Window)
	if r.Kind == rule.Fixed {
		return floorDiv(s, w) == floorDiv(t, w)
	}
	return t-s < w
}

// Call decides a call at t (ns): true when refused.
func (p *Provider) Call(t int64) bool {
	var by []int
	for k, r := range p.rules {
		n := 0
		for j := len(p.counted) - 1; j >= 0 && t-p.counted[j] < int64(r.Window); j-- {
			if InWindow(r, p.counted[j], t) {
				n++
			}
		}
		if n >= r.Limit {
			by = append(by, k)
		}
	}
	for _, k := range by {
		p.Any[k]++
	}
	if len(by) == 1 {
		p.Alone[by[0]]++
	}
	if len(by) == 0 || p.refusedCount {
		p.counted = append(p.counted, t)
	}
	return len(by) > 0
}

// Traffic draws probing times in ms: bursts, idle spells and steady paces,
// scaled to the contract's shortest rule.
func Traffic(rng *rand.Rand, first rule.Rule, calls int) []int64 {
	const base = 1_700_000_000_123 // epoch ms, off the second's edge
	t := int64(base + rng.IntN(1000))
	perCall := first.Window.Milliseconds() / int64(first.Limit)
	var out []int64
	for len(out) < calls {
		switch rng.IntN(3) {
		case 0: // a burst
			for range 1 + rng.IntN(3*first.Limit) {
				t += int64(rng.IntN(20))
				out = append(out, t)
			}
		case 1: // an idle spell, up to a minute and a half
			t += int64(rng.IntN(90_000))
		default: // a steady pace, about the shortest rule's
			gap := max(1, perCall/2+int64(rng.Int64N(perCall*2+1)))
			for range 5 + rng.IntN(100) {
				t += gap
				out = append(out, t)
			}
		}
	}
	return out[:calls]
}

// HiddenWindows are the windows a hidden contract draws from: those the
// traffic's spells probe.
var HiddenWindows = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second, time.Minute}

// Contract draws 1 to 3 rules on distinct windows, each binding: a longer
// window allows more calls than the shorter one, but fewer than the
// shorter's pace would fill it with.
func Contract(rng *rand.Rand) []rule.Rule {
	n := 1 + rng.IntN(3)
	perm := rng.Perm(len(HiddenWindows))[:n]
	var ws []time.Duration
	for _, i := range perm {
		ws = append(ws, HiddenWindows[i])
	}
	slices.Sort(ws)
	var rules []rule.Rule
	for k, w := range ws {
		r := rule.Rule{Window: w, Limit: 2 + rng.IntN(19)}
		if k > 0 {
			prev := rules[k-1]
			lo := prev.Limit + 1
			hi := int(int64(prev.Limit)*int64(w)/int64(prev.Window)) - 1
			if hi < lo {
				break
			}
			r.Limit = lo + rng.IntN(hi-lo+1)
		}
		if rng.IntN(2) == 0 {
			r.Kind = rule.Fixed
		}
		rules = append(rules, r)
	}
	return rules
}

// Call is one call of a replayed log.
type Call struct {
	At      int64 // ns
	Refused bool
}

// Replay sends the traffic (ms) through the provider.
func Replay(p *Provider, ms []int64) []Call {
	out := make([]Call, len(ms))
	for i, t := range ms {
		at := t * int64(time.Millisecond)
		out[i] = Call{At: at, Refused: p.Call(at)}
	}
	return out
}

// WriteCSV writes the log as ts_ms,status: the calls are on lines 2 on.
func WriteCSV(w io.Writer, calls []Call) error {
	if _, err := io.WriteString(w, "ts_ms,status\n"); err != nil {
		return err
	}
	for _, c := range calls {
		st := 200
		if c.Refused {
			st = 429
		}
		if _, err := fmt.Fprintf(w, "%d,%d\n", c.At/int64(time.Millisecond), st); err != nil {
			return err
		}
	}
	return nil
}

// floorDiv is t/w rounded toward minus infinity.
func floorDiv(t, w int64) int64 {
	q := t / w
	if t%w != 0 && t < 0 {
		q--
	}
	return q
}

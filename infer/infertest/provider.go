// Package infertest is a provider for tests of contract inference: it
// replays a hidden contract of sliding, fixed or bucket rules, on calls or
// on a cost unit, over probing traffic, and marks each call 200 or 429. It is written apart from
// package infer, by scanning back over the calls it counted.
package infertest

import (
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Provider replays a hidden contract: it refuses a call when any rule's
// window already holds Limit counted calls (for a cost rule, when the
// units already there plus the call's own exceed Limit; for a bucket rule,
// when the call's cost exceeds the bucket's level), and counts refused
// calls toward later windows only when refusedCount is set. It is written
// apart from the package's passes, by scanning back over the calls it
// counted and keeping each bucket's level as an exact fraction.
type Provider struct {
	rules        []rule.Rule
	refusedCount bool
	counted      []sent
	buckets      []bucket
	// Alone[k] counts the calls rule k refused that no other rule would.
	Alone []int
	// Any[k] counts the calls rule k refused.
	Any []int
}

// sent is a counted call: its time and its cost in the one cost unit.
type sent struct{ at, cost int64 }

// bucket is a bucket rule's state: the level after the last call.
type bucket struct {
	has   bool
	prev  int64
	level *big.Rat
}

// NewProvider returns a provider keeping rules.
func NewProvider(rules []rule.Rule, refusedCount bool) *Provider {
	return &Provider{rules: rules, refusedCount: refusedCount, Alone: make([]int, len(rules)), Any: make([]int, len(rules)),
		buckets: make([]bucket, len(rules))}
}

// InWindow reports whether an earlier call at s is in rule r's window for
// a call at t.
func InWindow(r rule.Rule, s, t int64) bool {
	w := int64(r.Window)
	if r.Kind == rule.Fixed {
		return rule.FloorDiv(s, w) == rule.FloorDiv(t, w)
	}
	return t-s < w
}

// Call decides a call of cost 1 at t (ns): true when refused.
func (p *Provider) Call(t int64) bool { return p.CallCost(t, 1) }

// CallCost decides a call at t (ns) of cost units in the contract's cost
// unit (its call rules count it once): true when refused.
func (p *Provider) CallCost(t, cost int64) bool {
	var by []int
	levels := make([]*big.Rat, len(p.rules))
	for k, r := range p.rules {
		c := int64(1)
		if r.Unit != "" {
			c = cost
		}
		var refuses bool
		if r.Kind == rule.Bucket {
			levels[k] = p.level(k, t)
			refuses = levels[k].Cmp(big.NewRat(c, 1)) < 0
		} else {
			var n int64
			for j := len(p.counted) - 1; j >= 0 && t-p.counted[j].at < int64(r.Window); j-- {
				if InWindow(r, p.counted[j].at, t) {
					n += p.counted[j].costIn(r)
				}
			}
			refuses = n+c > int64(r.Limit)
		}
		if refuses {
			by = append(by, k)
		}
	}
	for _, k := range by {
		p.Any[k]++
	}
	if len(by) == 1 {
		p.Alone[by[0]]++
	}
	counts := len(by) == 0 || p.refusedCount
	for k, r := range p.rules {
		if r.Kind != rule.Bucket {
			continue
		}
		c := int64(1)
		if r.Unit != "" {
			c = cost
		}
		b := &p.buckets[k]
		b.has, b.prev, b.level = true, t, levels[k]
		if counts && !slices.Contains(by, k) {
			b.level = new(big.Rat).Sub(levels[k], big.NewRat(c, 1))
		}
	}
	if counts {
		p.counted = append(p.counted, sent{at: t, cost: cost})
	}
	return len(by) > 0
}

func (s sent) costIn(r rule.Rule) int64 {
	if r.Unit != "" {
		return s.cost
	}
	return 1
}

// level is bucket rule k's level at t: full at the first call, else the
// last level refilled at Limit per Window, at most Burst.
func (p *Provider) level(k int, t int64) *big.Rat {
	r, b := p.rules[k], p.buckets[k]
	full := big.NewRat(int64(r.Burst), 1)
	if !b.has {
		return full
	}
	refill := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(r.Limit)), big.NewInt(t-b.prev)), big.NewInt(int64(r.Window)))
	l := new(big.Rat).Add(b.level, refill)
	if l.Cmp(full) > 0 {
		return full
	}
	return l
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

// Tokens is the cost unit of the contracts CostContract draws.
const Tokens = "tokens"

// CostContract draws a Contract and turns one or more of its rules into
// rules on Tokens: with calls of mean tokens on average, N/W becomes
// N*mean tokens/W. Pace is the first rule as a call rule, for Traffic.
func CostContract(rng *rand.Rand) (rules []rule.Rule, pace rule.Rule, mean int64) {
	rules = Contract(rng)
	pace = rules[0]
	mean = 5 + rng.Int64N(46)
	first := rng.IntN(len(rules))
	for k := range rules {
		if k == first || rng.IntN(2) == 0 {
			rules[k].Limit *= int(mean)
			rules[k].Unit = Tokens
		}
	}
	return rules, pace, mean
}

// BucketContract draws a Contract and turns one of its rules, N/W, into a
// token bucket refilled at N per W with a burst from N/2 to 2N (at least
// 1), alone or beside the others; with tokens, rules on Tokens as
// CostContract draws them. Pace is the first rule as drawn, for Traffic.
func BucketContract(rng *rand.Rand, tokens bool) (rules []rule.Rule, pace rule.Rule, mean int64) {
	rules = Contract(rng)
	pace, mean = rules[0], 1
	k := rng.IntN(len(rules))
	n := rules[k].Limit
	rules[k].Kind, rules[k].Burst = rule.Bucket, max(1, n/2+rng.IntN(3*n/2+1))
	if tokens {
		mean = 5 + rng.Int64N(46)
		for j := range rules {
			if j == k || rng.IntN(2) == 0 {
				rules[j].Limit *= int(mean)
				rules[j].Burst *= int(mean)
				rules[j].Unit = Tokens
			}
		}
	}
	return rules, pace, mean
}

// Costs draws n costs in tokens, uniform from 0 to 2*mean.
func Costs(rng *rand.Rand, n int, mean int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = rng.Int64N(2*mean + 1)
	}
	return out
}

// Call is one call of a replayed log.
type Call struct {
	At      int64 // ns
	Refused bool
	Cost    int64 // in Tokens
}

// Replay sends the traffic (ms) through the provider, each call of cost 1.
func Replay(p *Provider, ms []int64) []Call {
	out := make([]Call, len(ms))
	for i, t := range ms {
		at := t * int64(time.Millisecond)
		out[i] = Call{At: at, Refused: p.Call(at), Cost: 1}
	}
	return out
}

// ReplayCosts sends the traffic (ms) through the provider, call i of
// costs[i] tokens.
func ReplayCosts(p *Provider, ms, costs []int64) []Call {
	out := make([]Call, len(ms))
	for i, t := range ms {
		at := t * int64(time.Millisecond)
		out[i] = Call{At: at, Refused: p.CallCost(at, costs[i]), Cost: costs[i]}
	}
	return out
}

// WriteCostCSV writes the log as ts_ms,status,tokens.
func WriteCostCSV(w io.Writer, calls []Call) error {
	if _, err := io.WriteString(w, "ts_ms,status,"+Tokens+"\n"); err != nil {
		return err
	}
	for _, c := range calls {
		if _, err := fmt.Fprintf(w, "%d,%d,%d\n", c.At/int64(time.Millisecond), status(c), c.Cost); err != nil {
			return err
		}
	}
	return nil
}

func status(c Call) int {
	if c.Refused {
		return 429
	}
	return 200
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

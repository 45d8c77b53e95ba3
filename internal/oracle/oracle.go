// Package oracle judges sends against rules by brute force, straight from
// the written definitions (docs/semantics.md), so that differential tests
// have a second opinion that shares no code with the checker.
//
// It is slow on purpose: every window is summed afresh over every earlier
// send, every sum and bucket level is a math/big value that cannot overflow
// or round, and nothing is kept between sends but what the definition
// names. Use it on logs of a few hundred sends.
package oracle

import (
	"math/big"
	"sort"
	"time"
)

// Kind says how a rule's windows are laid out, as docs/semantics.md names them.
type Kind int

const (
	// Sliding windows start at every instant.
	Sliding Kind = iota
	// Fixed windows tile time from Offset, or are the local days of Zone.
	Fixed
	// Bucket is a token bucket of capacity Burst refilled at N per W.
	Bucket
	// FirstCall windows open at the first send after the previous one closed.
	FirstCall
)

// Rule is one contract, in plain numbers so the oracle depends on no
// package of the module.
type Rule struct {
	N    int64 // the limit, in calls or in Unit
	W    int64 // the window, ns
	Unit string
	Kind Kind
	// Offset shifts fixed windows from the epoch, 0 <= Offset < W.
	Offset int64
	// Zone, for a fixed daily rule, makes each local day one window.
	Zone *time.Location
	// Burst is a bucket's capacity.
	Burst int64
}

// Send is one send: its instant in ns and its cost per unit. A reserved
// send also has a settlement: from the instant Settled (at or after T) on,
// its cost is Actual, per unit, in place of Costs (the estimate). A send
// with Settled nil is never settled: its estimate stands.
type Send struct {
	T       int64
	Costs   map[string]int64
	Settled *int64
	Actual  map[string]int64
}

// Verdict is what the definitions say about one rule on one log.
type Verdict struct {
	// Violations are the input indices of the violating sends, in the
	// order they are judged (time order, ties in input order).
	Violations []int
	// Max is the largest window content (calls, or units of a cost rule);
	// nil for a bucket rule, which has no window to fill.
	Max *big.Int
	// Levels are, for a bucket rule, the level each violating send found.
	Levels []*big.Rat
}

// JudgeAll judges every rule on the same sends; closed selects the closed
// boundary [t, t+W], which only sliding rules have, and the closed reading
// of settlements, for every kind: a settlement at the instant of a send
// counts only after it.
func JudgeAll(sends []Send, rules []Rule, closed bool) []Verdict {
	out := make([]Verdict, len(rules))
	for i, r := range rules {
		out[i] = Judge(sends, r, closed)
	}
	return out
}

// Judge judges one rule; see JudgeAll.
func Judge(sends []Send, r Rule, closed bool) Verdict {
	order := Order(sends)
	switch r.Kind {
	case Fixed:
		return judgeFixed(sends, order, r, closed)
	case Bucket:
		return judgeBucket(sends, order, r, closed)
	case FirstCall:
		return judgeFirstCall(sends, order, r, closed)
	}
	return judgeSliding(sends, order, r, closed)
}

// Order returns the input indices in judging order: by time, equal times
// in input order.
func Order(sends []Send) []int {
	order := make([]int, len(sends))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sends[order[a]].T < sends[order[b]].T })
	return order
}

// cost is what send s weighs in rule r: 1 for a call rule, else its cost
// in r's unit (a send without one weighs nothing, which tests never give).
// For a reserved send that is its estimate.
func cost(s Send, r Rule) *big.Int {
	if r.Unit == "" {
		return big.NewInt(1)
	}
	return big.NewInt(s.Costs[r.Unit])
}

// settledBy reports whether send s's settlement is known at instant at:
// from its instant on, or under the closed reading only after it.
func settledBy(s Send, at int64, closed bool) bool {
	if s.Settled == nil {
		return false
	}
	return *s.Settled < at || !closed && *s.Settled == at
}

// costAt is what send s weighs in rule r as judged at instant at: its
// actual cost once settled, its estimate before.
func costAt(s Send, r Rule, at int64, closed bool) *big.Int {
	if r.Unit == "" || !settledBy(s, at, closed) {
		return cost(s, r)
	}
	return big.NewInt(s.Actual[r.Unit])
}

// diff is b - a exactly.
func diff(b, a int64) *big.Int {
	return new(big.Int).Sub(big.NewInt(b), big.NewInt(a))
}

// maxOf returns the larger of m and v, treating a nil m as below everything.
func maxOf(m, v *big.Int) *big.Int {
	if m == nil || v.Cmp(m) > 0 {
		return new(big.Int).Set(v)
	}
	return m
}

package infer

import (
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Reading says whether refused calls count toward later windows: the
// core type check reads a log's statuses by, so that a contract infer
// writes is judged under the reading it was found under.
type Reading = rule.Refusals

const (
	// RefusedCount: every call the provider saw counts, refused or not.
	RefusedCount = rule.RefusedCount
	// RefusedFree: only accepted calls count.
	RefusedFree = rule.RefusedFree
)

// windowGrid is the window lengths inferred by default, from one second to a day.
var windowGrid = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// windowKinds are the window kinds inferred: sliding, and fixed windows aligned
// to the Unix epoch.
var windowKinds = []rule.Kind{rule.Sliding, rule.Fixed}

// sends is a log sorted by time (equal times in input order), with the
// prefix count of accepted calls.
type sends struct {
	at      []int64
	refused []bool
	line    []int64
	acc     []int32 // acc[i]: accepted calls among the first i
	refIdx  []int32 // the indexes of the refused calls, in order
	// units name the cost units; costAll[u][i] and costAcc[u][i] are the
	// costs in units[u] of all and of the accepted calls among the first i.
	units            []string
	costAll, costAcc [][]int64
	// accAt holds the accepted calls' instants, and accCost[u+1] their
	// costs in units[u] (nil for calls: 1 each), made when first needed
	accAt   []int64
	accCost [][]int64
	accMu   sync.Mutex // accAt and accCost are made by whoever needs them first
}

// accepted returns the accepted calls' instants and their costs in unit
// u (nil for calls, u < 0: 1 each).
func (d *sends) accepted(u int) (at, cost []int64) {
	d.accMu.Lock()
	defer d.accMu.Unlock()
	if d.accCost == nil {
		d.accAt = make([]int64, 0, d.acc[len(d.at)])
		for i, t := range d.at {
			if !d.refused[i] {
				d.accAt = append(d.accAt, t)
			}
		}
		d.accCost = make([][]int64, len(d.units)+1)
	}
	if u >= 0 && d.accCost[u+1] == nil {
		cs := make([]int64, 0, len(d.accAt))
		for i := range d.at {
			if !d.refused[i] {
				cs = append(cs, d.costOf(u, i))
			}
		}
		d.accCost[u+1] = cs
	}
	return d.accAt, d.accCost[u+1]
}

func newSends(s []Send) *sends {
	n := len(s)
	d := &sends{at: make([]int64, n), refused: make([]bool, n), line: make([]int64, n), acc: make([]int32, n+1)}
	for i, c := range s {
		d.at[i], d.refused[i], d.line[i] = c.At, c.Refused, c.Line
		d.acc[i+1] = d.acc[i]
		if c.Refused {
			d.refIdx = append(d.refIdx, int32(i))
		} else {
			d.acc[i+1]++
		}
	}
	return d
}

// pass is what one window and kind found, under both readings.
type pass struct {
	lower     [2]int     // the least N the accepted calls allow (at least 1)
	lowerPins [2]int     // accepted calls whose window holds lower-1 earlier calls
	tightest  [2]int     // the first of them (index), -1 when no accepted call
	before    [2][]int32 // per refused call, the earlier calls in its window
	steps     int64      // pointer moves: the pass's cost
	// unit is the cost unit of a cost pass ("" counts calls); its wide
	// bounds, when set, replace before: per refused call, the most N it
	// explains.
	unit string
	wide [2][]int64
}

// bound is the most N that explains refused call r (by rank): the calls
// before it in its window, or for a cost pass the units before it plus its
// own cost less one (for a bucket pass, the most burst that explains it).
func (p *pass) bound(rd Reading, r int) int {
	if p.wide[rd] != nil {
		return clampInt(p.wide[rd][r])
	}
	return int(p.before[rd][r])
}

// walk visits the sorted calls in order for window w of kind k, each call
// i with lo, the first call of its window (its own included); it returns
// the pass's pointer moves, at most two per call.
func (d *sends) walk(w int64, k rule.Kind, visit func(i, lo int)) (steps int64) {
	lo := 0
	bucket := int64(0)
	for i, t := range d.at {
		if k == rule.Fixed {
			if b := rule.FloorDiv(t, w); i == 0 || b != bucket {
				bucket, lo = b, i
				steps++
			}
		} else {
			for t-d.at[lo] >= w {
				lo++
				steps++
			}
		}
		steps++
		visit(i, lo)
	}
	return steps
}

// count makes one pass over the sorted calls for window w of kind k: for
// each call, the calls before it in its window, under both readings.
func (d *sends) count(w int64, k rule.Kind) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	p.before[0] = make([]int32, len(d.refIdx))
	p.before[1] = make([]int32, len(d.refIdx))
	r := 0
	p.steps = d.walk(w, k, func(i, lo int) {
		all := int32(i - lo)
		free := d.acc[i] - d.acc[lo]
		if d.refused[i] {
			p.before[RefusedCount][r], p.before[RefusedFree][r] = all, free
			r++
			return
		}
		p.accept(RefusedCount, int(all)+1, i)
		p.accept(RefusedFree, int(free)+1, i)
	})
	return p
}

// accept records an accepted call that needs N >= n.
func (p *pass) accept(rd Reading, n, i int) {
	switch {
	case p.tightest[rd] < 0 || n > p.lower[rd]:
		p.lower[rd], p.lowerPins[rd], p.tightest[rd] = max(n, 1), 1, i
	case n == p.lower[rd]:
		p.lowerPins[rd]++
	}
}

package infer

import (
	"math"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// addCosts keeps the prefix sums of each unit's costs, of all calls and of
// the accepted ones.
func (d *sends) addCosts(s []Send, units []string) {
	d.units = units
	d.costAll = make([][]int64, len(units))
	d.costAcc = make([][]int64, len(units))
	for u := range units {
		all, acc := make([]int64, len(s)+1), make([]int64, len(s)+1)
		for i, c := range s {
			var cost int64
			if u < len(c.Cost) {
				cost = c.Cost[u]
			}
			all[i+1], acc[i+1] = all[i]+cost, acc[i]
			if !c.Refused {
				acc[i+1] += cost
			}
		}
		d.costAll[u], d.costAcc[u] = all, acc
	}
}

// costCandidates are the cost rules of every unit, window and kind, each
// under both readings, in that order.
func costCandidates(d *sends, windows []time.Duration) []Candidate {
	var out []Candidate
	for u := range d.units {
		for _, w := range windows {
			for _, k := range windowKinds {
				p := d.countCost(u, int64(w), k)
				for _, rd := range []Reading{RefusedCount, RefusedFree} {
					out = append(out, newCandidate(d, p, w, k, rd))
				}
			}
		}
	}
	return out
}

// countCost makes one pass for the cost rules of unit u: an accepted call
// of cost c with S units before it in its window needs N >= S+c, and a
// refused one is explained by every N <= S+c-1.
func (d *sends) countCost(u int, w int64, k rule.Kind) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}, unit: d.units[u]}
	p.wide[RefusedCount] = make([]int64, len(d.refIdx))
	p.wide[RefusedFree] = make([]int64, len(d.refIdx))
	all, acc := d.costAll[u], d.costAcc[u]
	r := 0
	p.steps = d.walk(w, k, func(i, lo int) {
		c := all[i+1] - all[i]
		sAll, sFree := all[i]-all[lo], acc[i]-acc[lo]
		if d.refused[i] {
			p.wide[RefusedCount][r], p.wide[RefusedFree][r] = sAll+c-1, sFree+c-1
			r++
			return
		}
		p.accept(RefusedCount, clampInt(sAll+c), i)
		p.accept(RefusedFree, clampInt(sFree+c), i)
	})
	return p
}

// clampInt keeps a bound within int, which is 32 bits on some platforms.
func clampInt(n int64) int {
	return int(min(n, math.MaxInt))
}

// costOf reads a record's costs into a send, keeping each unit's running
// sum over the log, and refuses a sum past int64.
func costOf(name string, rec sendlog.Record, units []string, sums []int64) ([]int64, error) {
	if len(units) == 0 {
		return nil, nil
	}
	out := make([]int64, len(units))
	for u, unit := range units {
		c := rec.Cost[u]
		if c > math.MaxInt64-sums[u] {
			return nil, &sendlog.InputError{File: name, Line: rec.Line, Text: strconv.FormatInt(c, 10),
				Msg: "the " + unit + " costs sum past 9223372036854775807 (int64): infer cannot bound them"}
		}
		sums[u] += c
		out[u] = c
	}
	return out, nil
}

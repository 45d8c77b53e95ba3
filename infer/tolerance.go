package infer

import (
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Spreads is the ladder of delay spreads tried, in order, when no contract
// fits a log exactly.
var Spreads = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
}

// offsetSteps is how many half spreads either way the clock offset is
// tried: the offset is bounded by the spread, and a clock further off
// needs a wider spread, which the ladder reaches.
const offsetSteps = 2

// Tolerance is what it takes to fit a log that no contract fits exactly:
// each call reached the provider somewhere in [t+o, t+o+Spread] for its
// logged instant t and a clock offset o.
type Tolerance struct {
	// Spread is the least spread on the ladder with which a contract fits
	// under some reading; the largest tried when none does (Fits false).
	Spread time.Duration
	Fits   bool
	// ByReading is the fit found at Spread under each reading, Best the
	// one reported (the fewest rules).
	ByReading [2]ToleranceFit
	Best      Reading
	Calls     int
}

// ToleranceFit is a reading's fit within a tolerance.
type ToleranceFit struct {
	Fit
	// Offset is the offset chosen for fixed windows, in the middle of the
	// offsets tried that fit alike, OffsetMin to OffsetMax. Without a
	// fixed rule among the fit's the offset does not matter (OffsetMatters
	// false).
	Offset, OffsetMin, OffsetMax time.Duration
	OffsetMatters                bool
	// Absorbed counts the calls the contract, its rules at their least N,
	// judges otherwise on the log's own instants (offset applied): those
	// consistent only thanks to the spread.
	Absorbed int
}

// Used returns the fit reported.
func (t *Tolerance) Used() ToleranceFit { return t.ByReading[t.Best] }

// tolerate climbs the ladder of spreads until a contract fits.
func tolerate(d *sends, windows []time.Duration, spreads []time.Duration) *Tolerance {
	tol := &Tolerance{Calls: d.n()}
	for _, sp := range spreads {
		tol.Spread = sp
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			tol.ByReading[rd] = tolerantFit(d, windows, int64(sp), rd)
		}
		a, b := tol.ByReading[RefusedCount], tol.ByReading[RefusedFree]
		tol.Best, _ = best([2]Fit{a.Fit, b.Fit})
		if tol.Fits = a.Fits || b.Fits; tol.Fits {
			break
		}
	}
	return tol
}

// tolerantFit finds, under reading rd and spread sp, the smallest contract
// over the offsets tried, and the range of offsets where it fits alike.
func tolerantFit(d *sends, windows []time.Duration, sp int64, rd Reading) ToleranceFit {
	var sliding []Candidate
	for _, w := range windows {
		sliding = append(sliding, newCandidate(d, d.spreadPass(int64(w), rule.Sliding, sp, 0, rd), w, rule.Sliding, rd))
	}
	at := func(o int64) Fit {
		cands := make([]*Candidate, 0, 2*len(windows))
		for i := range sliding {
			cands = append(cands, &sliding[i])
		}
		for _, w := range windows {
			c := newCandidate(d, d.spreadPass(int64(w), rule.Fixed, sp, o, rd), w, rule.Fixed, rd)
			cands = append(cands, &c)
		}
		return fit(d, cands, rd)
	}
	var found *Fit
	var fitting []int64 // the offsets where found fits
	for k := -offsetSteps; k <= offsetSteps; k++ {
		o := int64(k) * sp / 2
		f := at(o)
		switch {
		case found != nil && f.Fits && found.Fits && sameRules(f.Rules, found.Rules):
			fitting = append(fitting, o)
		case found == nil || betterFit(f, *found):
			found, fitting = &f, nil
			if f.Fits {
				fitting = []int64{o}
			}
		}
	}
	if !found.Fits {
		return ToleranceFit{Fit: *found}
	}
	tf := ToleranceFit{
		Fit:       *found,
		OffsetMin: time.Duration(fitting[0]), OffsetMax: time.Duration(fitting[len(fitting)-1]),
		OffsetMatters: slices.ContainsFunc(found.Rules, func(r Rule) bool { return r.Kind == rule.Fixed }),
	}
	if tf.OffsetMatters {
		tf.Offset = time.Duration(fitting[len(fitting)/2])
		tf.Fit = at(int64(tf.Offset))
	}
	tf.Absorbed = d.absorbed(tf.Rules, int64(tf.Offset), rd)
	return tf
}

// betterFit reports whether f beats g: it fits where g does not, with
// fewer rules, or, neither fitting, leaves fewer refusals unexplained.
func betterFit(f, g Fit) bool {
	switch {
	case f.Fits != g.Fits:
		return f.Fits
	case f.Fits:
		return len(f.Rules) < len(g.Rules)
	}
	return f.Unexplaineds < g.Unexplaineds
}

// sameRules reports whether two fits chose the same windows and kinds.
func sameRules(a, b []Rule) bool {
	return slices.EqualFunc(a, b, func(x, y Rule) bool { return x.Window == y.Window && x.Kind == y.Kind })
}

// spreadPass counts, for window w of kind k, each accepted call's earlier
// calls certainly in its window and each refused call's calls possibly in
// it, when every call reached the provider within [t+o, t+o+sp] for its
// logged instant t. It fills the pass's bounds under reading rd.
func (d *sends) spreadPass(w int64, k rule.Kind, sp, o int64, rd Reading) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	p.before[rd] = make([]int32, 0, len(d.refIdx))
	pre := d.counted(rd)
	// each bound only grows with the call, so a cursor per bound walks the
	// calls once: the pass stays O(n)
	var refLo, refHi, accLo, accHi cursor
	for i, t := range d.at {
		var lo, hi int // the calls in [lo, hi)
		if d.refused[i] {
			if k == rule.Fixed {
				lo = refLo.from(d.at, floorDiv(t+o, w)*w-o-sp)
			} else {
				lo = refLo.after(d.at, t-w-sp)
			}
			hi = refHi.from(d.at, t+sp)
			n := pre[hi] - pre[lo]
			if rd == RefusedCount { // a refused call counts itself only under this reading
				n--
			}
			p.before[rd] = append(p.before[rd], n)
			p.steps++
			continue
		}
		hi = accHi.from(d.at, t-sp)
		switch {
		case k == rule.Sliding:
			lo = accLo.after(d.at, t-w+sp)
		case floorDiv(t+o, w) != floorDiv(t+o+sp, w):
			lo = hi // it may be in either window: none certain
		default:
			lo = accLo.from(d.at, floorDiv(t+o, w)*w-o)
		}
		p.steps++
		p.accept(rd, int(pre[max(hi, lo)]-pre[lo])+1, i)
	}
	return p
}

// cursor is an index into sorted times that only moves forward.
type cursor int

// from returns the first index whose time is x or later.
func (c *cursor) from(at []int64, x int64) int {
	for int(*c) < len(at) && at[*c] < x {
		*c++
	}
	return int(*c)
}

// after returns the first index whose time is after x.
func (c *cursor) after(at []int64, x int64) int {
	for int(*c) < len(at) && at[*c] <= x {
		*c++
	}
	return int(*c)
}

// counted returns the prefix counts of the calls that count under rd.
func (d *sends) counted(rd Reading) []int32 {
	if rd == RefusedFree {
		return d.acc
	}
	pre := make([]int32, d.n()+1)
	for i := range d.at {
		pre[i+1] = int32(i + 1)
	}
	return pre
}

// absorbed counts the calls the rules, each at its least N, judge
// otherwise than the log says on the logged instants shifted by o.
func (d *sends) absorbed(rules []Rule, o int64, rd Reading) int {
	s := &sends{at: make([]int64, d.n()), refused: d.refused, acc: d.acc}
	for i, t := range d.at {
		s.at[i] = t + o
	}
	refuses := make([]bool, d.n())
	for _, r := range rules {
		s.walk(int64(r.Window), r.Kind, func(i, lo int) {
			n := i - lo
			if rd == RefusedFree {
				n = int(d.acc[i] - d.acc[lo])
			}
			refuses[i] = refuses[i] || n >= r.Min
		})
	}
	n := 0
	for i, r := range refuses {
		if r != d.refused[i] {
			n++
		}
	}
	return n
}

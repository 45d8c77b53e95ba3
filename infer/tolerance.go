package infer

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// spreadGrid is the ladder of delay spreads tried, in order, when no contract
// fits a log exactly.
var spreadGrid = []time.Duration{
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
	// Spread is the spread of the fit reported (see ToleranceFit.Spread).
	Spread time.Duration
	Fits   bool
	// ByReading is the fit found under each reading, Best the one
	// reported (the fewest rules, then the least spread).
	ByReading [2]ToleranceFit
	Best      Reading
	Calls     int
	// Simpler: a contract fits exactly, and this one of fewer rules fits
	// within the tolerance.
	Simpler bool
	// Delay is Options.Delay: the most the user says a call reached the
	// provider after its logged instant; 0 when not given.
	Delay time.Duration
	// wide is the spread within which the buckets' ranges hold every
	// bucket that fits: Delay when given, else bucketSpread.
	wide time.Duration
}

// contradicted reports whether no reading explains the log, or one
// explains it only with more rules than a tolerance needs; a log that
// fits within the delay the user gave is no contradiction.
func (res *Result) contradicted() bool {
	if res.Tolerance.WithinDelay() {
		return false
	}
	return !res.Fits[res.Best].Holds() || res.Tolerance != nil && res.Tolerance.Simpler
}

// WithinDelay reports whether a contract fits within the delay the
// user gave (Options.Delay): the log then fits, late as it is.
func (t *Tolerance) WithinDelay() bool {
	return t != nil && t.Delay > 0 && t.Fits && t.Spread <= t.Delay
}

// ToleranceFit is a reading's fit within a tolerance.
type ToleranceFit struct {
	Fit
	// Spread is the least spread on the ladder with which the reading's
	// fit of the fewest rules fits; the largest tried when none does.
	Spread time.Duration
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

// simplerSpread is how far the ladder is climbed past the first spread
// that fits, for a contract of fewer rules: a delay of a few
// milliseconds is common, and a rule that explains only the refusals it
// made is a patchwork, not the provider's contract.
const simplerSpread = 5 * time.Millisecond

// bucketSpread is the least spread a bucket's ranges within a tolerance
// hold every bucket of: a fit found within a narrower spread fits within
// this one too, and a bucket's region is thin (its rate often within a
// part in a thousand), so the region of the least spread that fits would
// miss the provider's bucket when the calls' delays spread wider.
const bucketSpread = simplerSpread

// tolerate climbs the ladder of spreads until a contract fits, and on up
// to simplerSpread, keeping under each reading the fit of the fewest
// rules at the least spread that gives it; a fit counts only with fewer
// rules than fewer[rd]. The buckets' ranges are those within spread wide
// where the fit's is narrower. Beside the buckets sampled, each reading
// tries those of seeds[rd] (an exact fit's: see exactSeeds).
func tolerate(d *sends, windows []time.Duration, spreads []time.Duration, fewer [2]int, seeds [2][]seedBucket, wide time.Duration) *Tolerance {
	return tolerateAs(d, windows, spreads, fewer, seeds, wide, false)
}

// tolerateAs is tolerate; single says that only whether a single rule
// fits is asked (fewer is at most 2 and only the answer's Fits is read):
// the searches that pair, sample or add buckets for covers of two rules
// or more are then left out (see spreadPasses.single).
func tolerateAs(d *sends, windows []time.Duration, spreads []time.Duration, fewer [2]int, seeds [2][]seedBucket, wide time.Duration, single bool) *Tolerance {
	tol := &Tolerance{Calls: d.n(), wide: wide}
	var found [2]bool
	for _, sp := range spreads {
		// Past the first fit, climb only for fewer rules than one.
		if found[0] || found[1] {
			least := math.MaxInt
			for rd := range found {
				if found[rd] {
					least = min(least, len(tol.ByReading[rd].Rules))
				}
			}
			if sp > simplerSpread || least <= 1 {
				break
			}
		}
		ps := &spreadPasses{d: d, windows: windows, sp: int64(sp), wide: int64(wide), regions: [2]map[string]region{{}, {}}, single: single}
		ps.sliding = ps.candidates(rule.Sliding, 0)
		ps.buckets = ps.bucketCandidates()
		ps.seedBuckets(seeds)
		for rd, f := range ps.fit() {
			f.Spread = sp
			switch {
			case f.Fits && len(f.Rules) < fewer[rd] && (!found[rd] || len(f.Rules) < len(tol.ByReading[rd].Rules)):
				tol.ByReading[rd], found[rd] = f, true
			case !found[rd]:
				tol.ByReading[rd] = f
			}
		}
	}
	for rd := range found {
		tol.ByReading[rd].Fits = found[rd]
	}
	a, b := tol.ByReading[RefusedCount], tol.ByReading[RefusedFree]
	tol.Best, _ = best([2]Fit{a.Fit, b.Fit})
	if a.Fits && b.Fits && len(a.Rules) == len(b.Rules) && b.Spread < a.Spread {
		tol.Best = RefusedFree
	}
	tol.Fits = a.Fits || b.Fits
	tol.Spread = tol.ByReading[tol.Best].Spread
	return tol
}

// spreadPasses makes the candidates of one spread: each window's sliding
// pass, and its fixed passes at each offset tried, each pass once for both
// readings. The fixed ones are made an offset at a time and dropped after,
// as a pass holds a count per refusal.
type spreadPasses struct {
	d       *sends
	windows []time.Duration
	sp      int64
	wide    int64 // the spread of the buckets' ranges (see tolerate)
	sliding [2][]Candidate
	buckets [2][]Candidate       // the same at every offset
	seeded  [2][]Candidate       // an exact fit's buckets (seedBuckets)
	regions [2]map[string]region // by reading: the readings are fitted side by side
	paired  [2]bool              // pairSpread has paired the reading's buckets
	// pairPast has sampled the reading's buckets past spreadBuckets' bursts
	pastPaired [2]bool
	// pairThird has sought a third bucket beside the reading's picks
	thirdPaired [2]bool
	// the buckets thirdNearSpread found, three by three
	triples [2][][]Candidate
	// single: only whether one rule alone fits is asked. A bucket that
	// explains every refusal alone lies in the region of those targets,
	// which spreadBuckets makes first: where that region is exact, the
	// sampled buckets and the searches for covers of two or more add no
	// single rule that fits.
	single bool
}

// candidates makes each window's pass of kind k at offset o, and its
// candidate under each reading. Each window's pass and candidates are
// made on every core, each in its own place, so that the order is the
// windows' whatever core made them.
func (ps *spreadPasses) candidates(k rule.Kind, o int64) [2][]Candidate {
	type job struct {
		u int // the cost unit; -1 counts calls
		w time.Duration
	}
	var jobs []job
	for u := -1; u < len(ps.d.units); u++ {
		for _, w := range ps.windows {
			jobs = append(jobs, job{u, w})
		}
	}
	var cs [2][]Candidate
	for rd := range cs {
		cs[rd] = make([]Candidate, len(jobs))
	}
	eachOnCores(len(jobs), func(i int) {
		var p *pass
		if j := jobs[i]; j.u < 0 {
			p = ps.d.spreadPass(int64(j.w), k, ps.sp, o)
		} else {
			p = ps.d.spreadCostPass(j.u, int64(j.w), k, ps.sp, o)
		}
		for rd := range cs {
			cs[rd][i] = newCandidate(ps.d, p, jobs[i].w, k, Reading(rd))
		}
	})
	return cs
}

// eachOnCores calls f(i) for each i below n, on as many goroutines as
// there are cores (at most n), and returns when every call has.
func eachOnCores(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// with finds the smallest contract under reading rd, the fixed windows
// being those given.
func (ps *spreadPasses) with(fixed [2][]Candidate, rd Reading) Fit {
	f := ps.refit(ps.cands(fixed, rd), rd)
	if ps.single {
		return f
	}
	// Pairing walks regions: it is tried from the spread a bucket's
	// ranges are taken at up, the narrower ones having been tried first,
	// where no cover fits, or none does once its buckets are bounded; and
	// where the cover takes three rules or more, its cover kept only where
	// it needs fewer: the sampled buckets beside the windows can cover two
	// hidden buckets with three rules (50 tokens/2s burst 90 and 162
	// tokens/30s burst 301 came back so, a window on calls among them).
	if (!f.Fits || len(f.Rules) > 2) && ps.sp >= ps.wide && ps.buckets[rd] != nil && ps.pairSpread(rd) {
		if g := ps.refit(ps.cands(fixed, rd), rd); !f.Fits || betterFit(g, f) {
			f = g
		}
	}
	if !f.Fits && ps.sp >= ps.wide && ps.buckets[rd] != nil && ps.pairPast(rd) {
		f = ps.refit(ps.cands(fixed, rd), rd)
	}
	if !f.Fits && ps.sp >= ps.wide && ps.buckets[rd] != nil && ps.pairThird(rd) {
		f = ps.refit(ps.cands(fixed, rd), rd)
	}
	if !f.Fits {
		f = ps.refitTriples(f, rd)
	}
	// An exact fit fits within every spread: beside the windows, its
	// buckets alone give a cover where the sampled ones led the refits
	// astray.
	if !f.Fits && len(ps.seeded[rd]) > 0 {
		f = ps.refit(ps.seededCands(fixed, rd), rd)
	}
	f.settle(bucketProof{single: true, pairs: true})
	if f.Smallest && len(f.Rules) > 1 {
		f.Smallest, f.Unproved = false, unprovedTolerance
	}
	return f
}

// refit finds the smallest cover of cands under reading rd, its buckets
// bounded by their regions, covered again without a bucket that fits
// only where the refusals the other rules explain take nothing from it.
// A cover whose buckets are still unbounded when the refits run out is
// no fit: it explains nothing the regions bear out.
func (ps *spreadPasses) refit(cands []*Candidate, rd Reading) Fit {
	f := fit(ps.d, cands, rd)
	for k := 0; ; k++ {
		empty := refineSpreadBuckets(ps.d, &f, cands, ps.sp, ps.wide, ps.windows, ps.regions[rd])
		switch {
		case len(empty) == 0:
			return f
		case k == maxRefits:
			return Fit{Reading: rd, Unexplaineds: len(ps.d.refIdx)}
		}
		cands = slices.DeleteFunc(cands, func(c *Candidate) bool { return slices.Contains(empty, c) })
		f = fit(ps.d, cands, rd)
	}
}

// cands are the spread's candidates under reading rd, the fixed windows
// being those given.
func (ps *spreadPasses) cands(fixed [2][]Candidate, rd Reading) []*Candidate {
	cands := make([]*Candidate, 0, len(ps.sliding[rd])+len(fixed[rd])+len(ps.buckets[rd])+len(ps.seeded[rd]))
	for i := range ps.buckets[rd] {
		cands = append(cands, &ps.buckets[rd][i])
	}
	for i := range ps.seeded[rd] {
		cands = append(cands, &ps.seeded[rd][i])
	}
	return ps.windowCands(cands, fixed, rd)
}

// seededCands are the spread's windows under reading rd, the fixed ones
// being those given, and the buckets at the exact fit's rates.
func (ps *spreadPasses) seededCands(fixed [2][]Candidate, rd Reading) []*Candidate {
	var cands []*Candidate
	for i := range ps.seeded[rd] {
		cands = append(cands, &ps.seeded[rd][i])
	}
	return ps.windowCands(cands, fixed, rd)
}

// refitTriples is f, or of the buckets thirdNearSpread found under
// reading rd, three by three, each three covered alone, the fit whose
// ranges are narrowest (see rangeWidth; the first of those): covered
// together, two of one three and one of another can claim the log, and
// the refits run out on covers whose regions prove empty (seed 20 of the
// calls' ground truth fit nowhere so). Threes sought beside different
// refusals can each fit; each three's ranges hold what fits beside the
// regions of its own other two (see refineSpreadBuckets), and the one
// that pins its buckets the most is kept: on seed 20 the hidden three
// came back within 0.6%, 2.4% and 0.02% of their rates at their bursts
// exactly, and the other three that fit, two buckets in the place of
// 13/5s burst 19 and none in that of 5/1s burst 10, far wider. It is
// tried where nothing else fits, at every offset, the
// regions it walks kept (ps.regions).
func (ps *spreadPasses) refitTriples(f Fit, rd Reading) Fit {
	best, narrowest := f, math.Inf(1)
	for _, tr := range ps.triples[rd] {
		cands := make([]*Candidate, len(tr))
		for i := range tr {
			cands[i] = &tr[i]
		}
		if g := ps.refit(cands, rd); g.Fits {
			if w := rangeWidth(g); w < narrowest {
				best, narrowest = g, w
			}
		}
	}
	return best
}

// rangeWidth is the sum over f's bucket rules of how wide their ranges
// are, each as a part of its least: the rate's and the burst's; an open
// range counts as 1000.
func rangeWidth(f Fit) float64 {
	var w float64
	for _, r := range f.Rules {
		if r.Kind != rule.Bucket {
			continue
		}
		if r.RateOpen || r.Max == 0 {
			w += 1000
			continue
		}
		w += float64(r.RateMax-r.RateMin)/float64(max(r.RateMin, 1)) + float64(r.Max-r.Min)/float64(max(r.Min, 1))
	}
	return w
}

// windowCands appends to cands the spread's windows under reading rd,
// the fixed ones being those given.
func (ps *spreadPasses) windowCands(cands []*Candidate, fixed [2][]Candidate, rd Reading) []*Candidate {
	for i := range ps.sliding[rd] {
		cands = append(cands, &ps.sliding[rd][i])
	}
	for i := range fixed[rd] {
		cands = append(cands, &fixed[rd][i])
	}
	return cands
}

// maxRefits bounds the covers tried again without a bucket that fits
// only where the refusals the other rules explain take nothing from it.
const maxRefits = 4

// fit finds, under each reading, the smallest contract over the offsets
// tried, and the range of offsets where it fits alike.
func (ps *spreadPasses) fit() [2]ToleranceFit {
	var found [2]*Fit
	var fitting [2][]int64 // the offsets where found fits
	for k := -offsetSteps; k <= offsetSteps; k++ {
		o := int64(k) * ps.sp / 2
		fixed := ps.candidates(rule.Fixed, o)
		// The readings share no state but the log's: each is fitted on
		// its own core.
		var fs [2]Fit
		eachOnCores(len(fs), func(rd int) { fs[rd] = ps.with(fixed, Reading(rd)) })
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			f := fs[rd]
			switch {
			case found[rd] != nil && f.Fits && found[rd].Fits && sameRules(f.Rules, found[rd].Rules):
				fitting[rd] = append(fitting[rd], o)
			case found[rd] == nil || betterFit(f, *found[rd]):
				found[rd], fitting[rd] = &f, nil
				if f.Fits {
					fitting[rd] = []int64{o}
				}
			}
		}
	}
	var out [2]ToleranceFit
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		out[rd] = ps.settle(*found[rd], fitting[rd], rd)
	}
	return out
}

// settle reports reading rd's fit: at the middle of the offsets where it
// fits alike when a fixed rule makes the offset matter.
func (ps *spreadPasses) settle(found Fit, fitting []int64, rd Reading) ToleranceFit {
	if !found.Fits {
		return ToleranceFit{Fit: found}
	}
	tf := ToleranceFit{
		Fit:       found,
		OffsetMin: time.Duration(fitting[0]), OffsetMax: time.Duration(fitting[len(fitting)-1]),
		OffsetMatters: slices.ContainsFunc(found.Rules, func(r Rule) bool { return r.Kind == rule.Fixed }),
	}
	if tf.OffsetMatters {
		tf.Offset = time.Duration(fitting[len(fitting)/2])
		tf.Fit = ps.with(ps.candidates(rule.Fixed, int64(tf.Offset)), rd)
	}
	tf.Absorbed = ps.d.absorbed(tf.Rules, int64(tf.Offset), rd)
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

// spreadWalk visits the sorted calls for window w of kind k, when every
// call reached the provider within [t+o, t+o+sp] for its logged instant t:
// each accepted call i with the calls [lo, hi) certainly before it in its
// window, each refused one with those [lo, hi) possibly in its window, its
// own included (see spreadCursor).
func (d *sends) spreadWalk(w int64, k rule.Kind, sp, o int64, visit func(i, lo, hi int)) {
	c := spreadCursor{d: d, w: w, k: k, sp: sp, o: o}
	for i := range d.at {
		lo, hi := c.bounds(i)
		visit(i, lo, hi)
	}
}

// spreadCursor gives, call by call in order, spreadWalk's [lo, hi) for
// window w of kind k within spread sp and offset o. Each bound only grows
// with the call, so a cursor per bound walks the calls once: the walk is
// O(n); so is the fixed window's start, found anew only when a call
// passes its end.
type spreadCursor struct {
	d                          *sends
	w, sp, o                   int64
	k                          rule.Kind
	refLo, refHi, accLo, accHi cursor
	start, end                 int64 // the fixed window [start, end) of t+o, less o
}

// bounds is call i's [lo, hi), for i from 0 up, one call after another.
func (c *spreadCursor) bounds(i int) (lo, hi int) {
	at, t, sp, w := c.d.at, c.d.at[i], c.sp, c.w
	if c.k == rule.Fixed && (i == 0 || t >= c.end) {
		c.start = rule.FloorDiv(t+c.o, w)*w - c.o
		c.end = c.start + w
	}
	if c.d.refused[i] {
		if c.k == rule.Fixed {
			lo = c.refLo.from(at, c.start-sp)
		} else {
			lo = c.refLo.after(at, t-w-sp)
		}
		return lo, c.refHi.from(at, t+sp)
	}
	hi = c.accHi.from(at, t-sp)
	switch {
	case c.k == rule.Sliding:
		lo = c.accLo.after(at, t-w+sp)
	case t+sp >= c.end:
		lo = hi // it may be in either window: none certain
	default:
		lo = c.accLo.from(at, c.start)
	}
	return min(lo, hi), hi
}

// spreadPass counts, for window w of kind k within spread sp and offset o
// (see spreadWalk), each accepted call's earlier calls certainly in its
// window and each refused call's calls possibly in it, under both
// readings: the calls in the window are the same, the readings count
// different ones.
func (d *sends) spreadPass(w int64, k rule.Kind, sp, o int64) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	all := make([]int32, 0, len(d.refIdx))
	free := make([]int32, 0, len(d.refIdx))
	c := spreadCursor{d: d, w: w, k: k, sp: sp, o: o}
	for i := range d.at {
		lo, hi := c.bounds(i)
		if d.refused[i] {
			// a refused call counts itself only when refused calls count
			all = append(all, int32(hi-lo-1))
			free = append(free, d.acc[hi]-d.acc[lo])
			continue
		}
		p.accept(RefusedCount, hi-lo+1, i)
		p.accept(RefusedFree, int(d.acc[hi]-d.acc[lo])+1, i)
	}
	p.before[RefusedCount], p.before[RefusedFree] = all, free
	p.steps = int64(d.n())
	return p
}

// spreadCostPass is spreadPass for the cost rules of unit u: an accepted
// call of cost c needs N at least the units certainly before it plus c, a
// refused one is explained by every N below the units possibly in its
// window, its own cost included.
func (d *sends) spreadCostPass(u int, w int64, k rule.Kind, sp, o int64) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}, unit: d.units[u]}
	p.wide[RefusedCount] = make([]int64, 0, len(d.refIdx))
	p.wide[RefusedFree] = make([]int64, 0, len(d.refIdx))
	all, acc := d.costAll[u], d.costAcc[u]
	d.spreadWalk(w, k, sp, o, func(i, lo, hi int) {
		p.steps++
		c := all[i+1] - all[i]
		if d.refused[i] {
			// [lo, hi) holds the call itself: its own cost counts once
			p.wide[RefusedCount] = append(p.wide[RefusedCount], all[hi]-all[lo]-1)
			p.wide[RefusedFree] = append(p.wide[RefusedFree], acc[hi]-acc[lo]+c-1)
			return
		}
		p.accept(RefusedCount, clampInt(all[hi]-all[lo]+c), i)
		p.accept(RefusedFree, clampInt(acc[hi]-acc[lo]+c), i)
	})
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

// absorbed counts the calls the rules, each at its least N, judge
// otherwise than the log says on the logged instants shifted by o.
func (d *sends) absorbed(rules []Rule, o int64, rd Reading) int {
	s := &sends{at: make([]int64, d.n()), refused: d.refused, acc: d.acc}
	for i, t := range d.at {
		s.at[i] = t + o
	}
	refuses := make([]bool, d.n())
	for _, r := range rules {
		if r.Kind == rule.Bucket {
			d.bucketRefuses(slices.Index(d.units, r.Unit), uint64(r.perDay), int64(r.Burst), rd, refuses)
			continue
		}
		// the weight before each call: calls, or the rule's unit's costs
		all, acc := func(i int) int64 { return int64(i) }, func(i int) int64 { return int64(d.acc[i]) }
		if u := slices.Index(d.units, r.Unit); r.Unit != "" && u >= 0 {
			all = func(i int) int64 { return d.costAll[u][i] }
			acc = func(i int) int64 { return d.costAcc[u][i] }
		}
		s.walk(int64(r.Window), r.Kind, func(i, lo int) {
			n := all(i) - all(lo)
			if rd == RefusedFree {
				n = acc(i) - acc(lo)
			}
			if r.Unit != "" { // its own cost must fit too
				n += all(i+1) - all(i) - 1
			}
			refuses[i] = refuses[i] || n >= int64(r.Min)
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

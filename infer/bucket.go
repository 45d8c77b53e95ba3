package infer

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// day is the unit of a bucket's rate: every grid window divides it, so a
// rate of R per grid window is a whole number of units per day.
const day = uint64(24 * time.Hour)

// u128 is an unsigned 128-bit integer: a bucket's deficit times a day
// (in ns) stays exact in it. The checker (checker/u128.go) and the
// limiters (strategies/kinds.go) keep the same few lines, each its own so
// that none leans on code it is checked against; infer's bucket passes are
// checked against infertest's replay in math/big.
type u128 struct{ hi, lo uint64 }

func mul64(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (a u128) add(b u128) u128 {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, _ := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) sub(b u128) u128 {
	lo, c := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, c)
	return u128{hi, lo}
}

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// refill is a bucket's deficit def (times a day) after dt ns at q units a
// day: less the refill, never below full.
func refill(def u128, q uint64, dt int64) u128 {
	fill := mul64(q, uint64(dt))
	if def.less(fill) {
		return u128{}
	}
	return def.sub(fill)
}

// ceilDay is a/day rounded up, at most MaxInt64.
func (a u128) ceilDay() int64 {
	if a.hi >= day {
		return math.MaxInt64
	}
	q, r := bits.Div64(a.hi, a.lo, day)
	if r != 0 {
		q++
	}
	return int64(min(q, math.MaxInt64))
}

// costOf is call i's cost in unit u, 1 for the call rules (u < 0).
func (d *sends) costOf(u, i int) int64 {
	if u < 0 {
		return 1
	}
	return d.costAll[u][i+1] - d.costAll[u][i]
}

// bucketFill fills reading rd of p for a bucket refilled at q units a
// day: the least burst the accepted calls allow, and per refused call the
// most burst that explains it. The bucket is kept as its deficit below
// full times a day, which does not depend on the burst: each call finds
// need = deficit + its cost, and a burst B has room for it when
// B*day >= need. An accepted call drains the bucket; under RefusedCount a
// refused one the bucket had room for (burst b) drains it too. It returns
// the pass's steps, one per call.
func (d *sends) bucketFill(p *pass, u int, q uint64, rd Reading, b int64) int64 {
	p.lower[rd], p.lowerPins[rd], p.tightest[rd] = 1, 0, -1
	var costs []int64
	if u >= 0 {
		costs = d.costAll[u]
	}
	r := 0
	// An accepted call whose need is at most below cannot raise the least
	// burst or pin it: skip its division.
	var def, below u128
	room := mul64(uint64(max(b, 0)), day)
	unit := mul64(1, day)
	prev := int64(0)
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		need := def.add(unit)
		if costs != nil {
			need = def.add(mul64(uint64(costs[i+1]-costs[i]), day))
		}
		switch {
		case !d.refused[i]:
			if below.less(need) {
				p.accept(rd, clampInt(need.ceilDay()), i)
				below = mul64(uint64(p.lower[rd]-1), day)
			}
			def = need
		default:
			p.wide[rd][r] = need.ceilDay() - 1
			r++
			if rd == RefusedCount && !room.less(need) {
				def = need
			}
		}
	}
	return int64(len(d.at))
}

// maxFixpoint bounds the passes that look for the least burst under
// RefusedCount, where the refusals that drain depend on the burst.
const maxFixpoint = 16

// bucketAt makes the passes for a bucket refilled at q units a day, under
// RefusedFree, and with both under RefusedCount too, starting the search
// for its least burst from from.
func (d *sends) bucketAt(u int, q uint64, both bool, from int) *pass {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	if u >= 0 {
		p.unit = d.units[u]
	}
	for rd := range p.wide {
		p.wide[rd] = lendWide(len(d.refIdx))
	}
	p.steps = d.bucketFill(p, u, q, RefusedFree, 0)
	if !both {
		giveWide(p.wide[RefusedCount])
		p.wide[RefusedCount] = nil
		return p
	}
	// More drains only deepen the deficit: start from the free reading's
	// burst (or a higher one known to be needed) and raise it until the
	// accepted calls fit.
	b := int64(max(p.lower[RefusedFree], from))
	for range maxFixpoint {
		p.steps += d.bucketFill(p, u, q, RefusedCount, b)
		if int64(p.lower[RefusedCount]) <= b {
			p.lower[RefusedCount] = int(b)
			break
		}
		b = int64(p.lower[RefusedCount])
	}
	return p
}

// passOf is a bucket candidate's pass, made again: the search keeps only
// each candidate's set.
func (c *Candidate) passOf(d *sends) *pass {
	if c.pass == nil {
		c.pass = d.bucketAt(slices.Index(d.units, c.Unit), uint64(c.PerDay), true, c.AtLeast)
	}
	return c.pass
}

// The bucket search sweeps a coarse grid of rates, each at its least
// burst, then for bursts in the range those span finds the least rate
// that keeps the accepted calls: every burst up to allBursts, then a
// geometric spread, those near the best coarse rates first, within a
// budget of pointer steps.
const (
	coarseRatio = 1.25
	bestCoarse  = 2 // coarse rates whose bursts are searched first
	burstSpan   = 1.25
	allBursts   = 64
	burstRatio  = 1.03
	// The sparse spread: every burst up to sparseBursts, then a ratio.
	sparseBursts = 8
	sparseRatio  = 1.15
	maxRateSpan  = 1e7
	// maxBucketSteps bounds the steps of the burst searches of a unit:
	// about 60 passes over a million calls, and maxBucketPasses passes
	// over a shorter log.
	maxBucketSteps  = 60_000_000
	maxBucketPasses = 20000
	maxSearched     = 128 // bursts searched per unit
	aroundBursts    = 32  // of which kept for those around the best
)

// rateRange is the span of rates worth trying, in units a day: from one
// at which the log's accepted units barely refill, to one that refills a
// call's cost in the shortest gap between calls.
func (d *sends) rateRange(u int) (lo, hi float64) {
	n := len(d.at)
	span := float64(d.at[n-1]-d.at[0]) + 1
	var acc, most float64
	gap := math.Inf(1)
	for i := range n {
		c := float64(d.costOf(u, i))
		if !d.refused[i] {
			acc += c
		}
		most = max(most, c)
		if i > 0 && d.at[i] > d.at[i-1] {
			gap = min(gap, float64(d.at[i]-d.at[i-1]))
		}
	}
	lo = max(1, acc*float64(day)/span/4)
	hi = max(lo, most*float64(day)/min(gap, span)*2)
	return lo, min(hi, lo*maxRateSpan, math.MaxInt64/4)
}

// bucketCandidates are the buckets of each unit the search tries: the
// coarse sweep's under RefusedFree, then the least rate of each burst
// searched under both readings. rest[rd] are the refusals the window
// rules explain under rd: the search stops at a bucket that explains
// every other refusal (and at least one), or all of them.
func bucketCandidates(d *sends, rest [2]bitset) (out []Candidate, steps int64) {
	if len(d.refIdx) == 0 || len(d.at) < 2 {
		return nil, 0
	}
	n := len(d.refIdx)
	for u := -1; u < len(d.units); u++ {
		coarse, st := d.coarseBuckets(u)
		steps += st
		out = append(out, coarse...)
		var spent int64
		budget := min(maxBucketSteps, maxBucketPasses*int64(len(d.at)))
		searched := map[int]bool{}
		done := false
		var ahead map[int]rated // the least rates of the bursts next in turn
		search := func(bursts []int, most int) {
			for j, b := range bursts {
				if done || spent > budget || len(searched) >= most {
					return
				}
				if searched[b] {
					continue
				}
				searched[b] = true
				if _, ok := ahead[b]; !ok {
					ahead = d.leastRates(u, nextUnsearched(bursts[j:], searched, b), coarse)
				}
				cs, st := ahead[b].cands, ahead[b].steps
				out = append(out, cs...)
				spent += st
				done = slices.ContainsFunc(cs, func(c Candidate) bool {
					all := union(n, []*Candidate{&c, {set: rest[c.Reading]}}).count() == n
					return all && (c.Explains > rest[c.Reading].count()/2 || c.Explains == n)
				})
				if !done && len(searched)%coverEvery == 0 {
					// Several buckets may explain what the windows leave.
					_, done = greedyPicks(n, out, rest)
				}
			}
		}
		search(burstsToSearch(coarse), maxSearched-aroundBursts)
		// Past allBursts the spread skips bursts: search every one around
		// the buckets that explain the most.
		search(burstsAround(out, 2), maxSearched)
		// No one bucket explains what the windows leave: several may. Each
		// round picks, per reading, the buckets that explain the most of
		// what the others leave, and searches every burst around them and
		// rates just above each.
		spread := map[[2]int64]bool{}
		for round := 0; round < maxRounds && !done && spent <= budget; round++ {
			picks, covered := greedyPicks(n, out, rest)
			if done = covered; done {
				break
			}
			search(burstsAround(picks, len(picks)), len(searched)+aroundBursts)
			for _, c := range picks {
				if k := [2]int64{c.PerDay, int64(c.AtLeast)<<1 | int64(c.Reading)}; !spread[k] && spent <= budget {
					spread[k] = true
					cs, st := d.rateSpread(u, c)
					out, spent = append(out, cs...), spent+st
				}
			}
		}
		steps += spent
	}
	return out, steps
}

// rated is the least rate leastRate finds for a burst, and its steps.
type rated struct {
	cands []Candidate
	steps int64
}

// leastRates is leastRate of each burst of bs, on every core: the search
// takes them in turn, and one that ends the search leaves those after it
// unread.
func (d *sends) leastRates(u int, bs []int, coarse []Candidate) map[int]rated {
	found := make([]rated, len(bs))
	eachOnCores(len(bs), func(i int) {
		found[i].cands, found[i].steps = d.leastRate(u, bs[i], coarse)
	})
	out := make(map[int]rated, len(bs))
	for i, b := range bs {
		out[b] = found[i]
	}
	return out
}

// nextUnsearched is first and the bursts after it in bursts that are not
// searched yet, each once, as many as there are cores.
func nextUnsearched(bursts []int, searched map[int]bool, first int) []int {
	bs := []int{first}
	for _, b := range bursts {
		if len(bs) == runtime.GOMAXPROCS(0) {
			break
		}
		if !searched[b] && !slices.Contains(bs, b) {
			bs = append(bs, b)
		}
	}
	return bs
}

// maxRounds bounds the rounds of the search for several buckets; a
// round searches up to aroundBursts bursts and spreads the rates of up
// to maxRules buckets per reading, each over spreadRates rates.
const (
	maxRounds   = 3
	coverEvery  = 8 // bursts searched between the checks for a cover
	spreadRates = 16
	spreadStep  = 400 // the spread's step is 1/spreadStep of the rate
)

// greedyPicks are, per reading, the buckets that explain the most of the
// refusals rest and the buckets picked before leave, up to maxRules; and
// whether the picks of a reading explain every refusal.
func greedyPicks(n int, cands []Candidate, rest [2]bitset) ([]Candidate, bool) {
	var picks []Candidate
	for rd := range rest {
		left := newBitset(n)
		for i := range n {
			if !rest[rd].has(i) {
				left.add(i)
			}
		}
		for range maxRules {
			best, most := -1, 0
			for i := range cands {
				if k := common(cands[i].set, left); cands[i].Reading == Reading(rd) && k > most {
					best, most = i, k
				}
			}
			if best < 0 {
				break
			}
			picks = append(picks, cands[best])
			for i, w := range cands[best].set {
				left[i] &^= w
			}
			if left.count() == 0 {
				return picks, true
			}
		}
	}
	return picks, false
}

// allPicks are greedyPicks over every refusal: per reading, the
// candidates that explain the most of what those picked before leave.
func allPicks(n int, cands []Candidate) []Candidate {
	var none [2]bitset
	for rd := range none {
		none[rd] = newBitset(n)
	}
	picks, _ := greedyPicks(n, cands, none)
	return picks
}

// common counts the refusals in both sets.
func common(a, b bitset) int {
	k := 0
	for i, w := range a {
		k += bits.OnesCount64(w & b[i])
	}
	return k
}

// rateSpread judges c's burst at rates just above c's, up to spreadRates
// steps of 1/spreadStep of it, and at the most rate below those at which
// the burst still fits, and returns the buckets that fit and explain
// other refusals than the rate below: under RefusedCount the refusals a
// bucket explains change with its rate (more rate, more refusals that
// drain), and a contract of several buckets may need the one at the
// hidden rate, often the edge.
func (d *sends) rateSpread(u int, c Candidate) ([]Candidate, int64) {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}, unit: c.Unit}
	for rd := range p.wide {
		p.wide[rd] = make([]int64, len(d.refIdx))
	}
	var out []Candidate
	var steps int64
	last := c.set
	fits := func(r uint64) bool {
		steps += d.bucketFill(p, u, r, c.Reading, int64(c.AtLeast))
		return p.lower[c.Reading] <= c.AtLeast
	}
	keep := func(r uint64) {
		p.lower[c.Reading] = c.AtLeast
		nc := newCandidate(d, p, 24*time.Hour, rule.Bucket, c.Reading)
		nc.PerDay, nc.pass, nc.Steps = int64(r), nil, steps
		if !slices.Equal(nc.set, last) {
			out, last = append(out, nc), nc.set
		}
	}
	q := uint64(c.PerDay)
	good := q
	for k := uint64(1); k <= spreadRates; k++ {
		r := q + max(q*k/spreadStep, k)
		if !fits(r) {
			if edge := bisectRate(good, r, func(r uint64) bool { return !fits(r) }) - 1; edge > good && fits(edge) {
				keep(edge)
			}
			break
		}
		good = r
		keep(r)
	}
	return out, steps
}

// burstsAround are the bursts next to those of the most buckets that
// explain the most refusals, within a step of the geometric spread.
func burstsAround(cands []Candidate, most int) []int {
	best := slices.Clone(cands)
	slices.SortStableFunc(best, func(a, b Candidate) int { return cmp.Compare(b.Explains, a.Explains) })
	var out []int
	for _, c := range best[:min(most, len(best))] {
		if c.AtLeast <= allBursts {
			continue
		}
		w := int(float64(c.AtLeast)*(burstRatio-1)) + 1
		for b := c.AtLeast - w; b <= c.AtLeast+w; b++ {
			out = append(out, b)
		}
	}
	return out
}

// burstsToSearch are the bursts the coarse rates' least bursts span: those
// near the rates whose bucket explains the most refusals first, then a
// sparse spread of the others, then the rest from the least up.
func burstsToSearch(coarse []Candidate) []int {
	best := slices.Clone(coarse)
	slices.SortStableFunc(best, func(a, b Candidate) int { return cmp.Compare(b.Explains, a.Explains) })
	var out []int
	add := func(lo, hi, dense int, ratio float64) {
		for b := max(lo, 1); b <= hi; {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
			if b++; b > dense {
				b = max(b, int(float64(b-1)*ratio))
			}
		}
	}
	for _, c := range best[:min(bestCoarse, len(best))] {
		add(int(float64(c.AtLeast)/burstSpan), int(float64(c.AtLeast)*burstSpan)+1, allBursts, burstRatio)
	}
	least, most := math.MaxInt, 0
	for _, c := range coarse {
		least, most = min(least, c.AtLeast), max(most, c.AtLeast)
	}
	// A sparse spread over the whole span first, then the fine one.
	add(least, most, sparseBursts, sparseRatio)
	add(least, most, allBursts, burstRatio)
	return out
}

// leastRate finds the least rate (units a day) at which a bucket of burst
// b keeps every accepted call, by bisection between the coarse rates
// around it, and returns that bucket under each reading that it fits. The
// bisection reads the refusals as RefusedFree, where more rate never
// lowers the level; under RefusedCount a refusal the bucket had room for
// drains it, which more rate can make happen, so that reading is judged
// at the rate found.
func (d *sends) leastRate(u, b int, coarse []Candidate) ([]Candidate, int64) {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	if u >= 0 {
		p.unit = d.units[u]
	}
	for rd := range p.wide {
		p.wide[rd] = lendWide(len(d.refIdx))
	}
	var steps int64
	fits := func(q uint64, rd Reading) bool {
		steps += d.bucketFill(p, u, q, rd, int64(b))
		return p.lower[rd] <= b
	}
	var lo, hi uint64 // lo does not fit (0: none known), hi does
	for _, c := range coarse {
		if q := uint64(c.PerDay); c.AtLeast <= b && (hi == 0 || q < hi) {
			hi = q
		}
	}
	for _, c := range coarse {
		if q := uint64(c.PerDay); q < hi && q > lo {
			lo = q
		}
	}
	if hi == 0 {
		return nil, steps
	}
	// The least rate under RefusedFree, by forced jumps from lo up.
	q, st := d.leastRoom(u, int64(b), lo+1, nil)
	steps += st
	if q == 0 || q > hi {
		q = bisectRate(lo, hi, func(q uint64) bool { return fits(q, RefusedFree) })
	}
	hi = q
	var out []Candidate
	for _, rd := range []Reading{RefusedFree, RefusedCount} {
		q := hi
		if rd == RefusedCount && !fits(q, rd) {
			var st int64
			if q, st = d.countRate(u, b, q); q == 0 {
				steps += st
				continue
			}
			steps += st
		}
		if fits(q, rd) {
			p.lower[rd] = b
			c := newCandidate(d, p, 24*time.Hour, rule.Bucket, rd)
			c.PerDay, c.pass, c.Steps = int64(q), nil, steps
			out = append(out, c)
		}
	}
	for _, w := range p.wide {
		giveWide(w)
	}
	return out, steps
}

// countRate is the least rate from q up at which a bucket of burst b
// keeps every accepted call under RefusedCount, 0 if none is found. More
// rate can make a refusal drain and an accepted call no longer fit, so
// the rates that fit need not be one span, and traffic at the limit can
// pin the hidden one to a unit a day: no bisection finds it. Each step
// runs the bucket at q to the first accepted call it has no room for,
// and raises q to the least rate that gives that call room with the
// refusals before it draining as they did, at most maxJumps steps.
func (d *sends) countRate(u, b int, q uint64) (uint64, int64) {
	var steps int64
	drained := newBitset(len(d.refIdx))
	for range maxJumps {
		clear(drained)
		i, r, start := d.firstMiss(u, q, b, drained)
		steps += int64(i + 1)
		if i < 0 {
			return q, steps + int64(len(d.at))
		}
		next := d.rateFor(u, b, i, r, start, drained)
		steps += int64(i - start + 1)
		if next <= q {
			return 0, steps
		}
		q = next
	}
	return 0, steps
}

// maxJumps bounds the steps of countRate.
const maxJumps = 64

// firstMiss runs a bucket of burst b refilled at q units a day under
// RefusedCount, adding the refusals that drain it to drained, and returns
// the first accepted call it has no room for (-1 if none), the rank of
// the refusals before it, and the last call before it that found the
// bucket full.
func (d *sends) firstMiss(u int, q uint64, b int, drained bitset) (int, int, int) {
	room := mul64(uint64(b), day)
	var def u128
	prev, r, start := int64(0), 0, 0
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		if def == (u128{}) {
			start = i
		}
		prev = t
		need := def.add(mul64(uint64(d.costOf(u, i)), day))
		switch {
		case !d.refused[i]:
			if room.less(need) {
				return i, r, start
			}
			def = need
		default:
			if !room.less(need) {
				def = need
				drained.add(r)
			}
			r++
		}
	}
	return -1, r, start
}

// rateFor is the least rate (units a day) at which a bucket of burst b has
// room for accepted call i, the calls before it taking what they took
// (the accepted ones and the refusals in drained; r refusals precede i):
// for every earlier call j at which the bucket may have been full, the
// units taken from j to i less b must have been refilled by t_i. It is 0
// when no rate gives i room. The bucket was full at call start at the
// rate tried, and at every rate above it the line from start outdoes those
// from earlier calls (they were below it there, and fall faster): the
// scan stops at start.
func (d *sends) rateFor(u, b, i, r, start int, drained bitset) uint64 {
	var taken, most uint64
	for j := i; j >= start; j-- {
		switch {
		case !d.refused[j]:
			taken += uint64(d.costOf(u, j))
		default:
			r--
			if drained.has(r) {
				taken += uint64(d.costOf(u, j))
			}
		}
		if taken <= uint64(b) {
			continue
		}
		dt := uint64(d.at[i] - d.at[j])
		over := mul64(taken-uint64(b), day)
		if dt == 0 {
			return 0
		}
		if over.hi >= dt {
			return math.MaxInt64 / 4
		}
		q, rem := bits.Div64(over.hi, over.lo, dt)
		if rem != 0 {
			q++
		}
		most = max(most, q)
	}
	return min(most, math.MaxInt64/4)
}

// bisectRate narrows lo (which does not fit) and hi (which does) to
// adjacent rates and returns hi.
func bisectRate(lo, hi uint64, fits func(uint64) bool) uint64 {
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// coarseBuckets makes unit u's bucket at each coarse rate of its range
// under RefusedFree, the rates a part in coarseRatio apart from the least
// up, and returns them with the steps spent. The rates are walked on
// every core, each into its own place and with bounds of its own.
func (d *sends) coarseBuckets(u int) ([]Candidate, int64) {
	var rates []uint64
	lo, hi := d.rateRange(u)
	for r := lo; r <= hi; r *= coarseRatio {
		rates = append(rates, uint64(r))
	}
	out := make([]Candidate, len(rates))
	steps := make([]int64, len(rates))
	eachOnCores(len(rates), func(i int) {
		p := d.bucketAt(u, rates[i], false, 0)
		steps[i] = p.steps
		out[i] = newCandidate(d, p, 24*time.Hour, rule.Bucket, RefusedFree)
		out[i].PerDay, out[i].pass = int64(rates[i]), nil
		giveWide(p.wide[RefusedFree])
	})
	var spent int64
	for _, st := range steps {
		spent += st
	}
	return out, spent
}

// undominated drops the bucket candidates whose refusals another
// candidate of the same reading explains too: a cover never needs them.
func undominated(buckets []Candidate, all []*Candidate) []Candidate {
	var out []Candidate
	for i := range buckets {
		b := &buckets[i]
		if b.Explains == 0 {
			continue
		}
		dominated := false
		for _, c := range all {
			if c != b && c.Reading == b.Reading && subset(b.set, c.set) && (c.Kind != rule.Bucket || !subset(c.set, b.set) || c.PerDay < b.PerDay) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, *b)
		}
	}
	return out
}

func subset(a, b bitset) bool {
	for i, w := range a {
		if w&^b[i] != 0 {
			return false
		}
	}
	return true
}

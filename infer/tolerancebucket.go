package infer

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// A bucket within a spread sp: call i reached the provider at some a_i in
// [s_i, s_i+sp] for its logged instant s_i (a clock offset shifts every
// call alike, which a bucket does not see). No single arrival per call
// decides the fit (two accepted calls logged at one instant fit a burst
// of 1 when they arrived a refill apart, not when both arrived late), so
// the bucket is judged, as the windows are, on what is certain for an
// accepted call and what is possible for a refused one:
//
//   - the accepted calls logged from s_j to s_i all arrived within
//     [s_j, s_i+sp], and a bucket gives out at most B + q·(s_i−s_j+sp) in
//     that time: B must be at least each accepted call's need on the
//     logged instants less q·sp (and its own cost);
//   - a refused call r found the bucket short at a_r ≥ s_r. What it found
//     taken is at most what the calls that may take (the accepted ones,
//     and under "refused calls count" the refusals the bucket does not
//     explain) took: those logged in [s_r−sp, s_r+sp] (all may have
//     arrived just before r), plus the deficit on the logged instants
//     just before s_r−sp. B must be less than that plus r's cost.
//
// Whatever the arrivals in the spread were, a bucket that kept them meets
// both, so the region these bound holds every bucket that fits within the
// spread: it may be wider than those that fit, never narrower.

// spreadLeast is the least burst the accepted calls certainly need from
// a bucket of unit u at q units a day within spread sp.
func (d *sends) spreadLeast(u int, q uint64, sp int64) int64 {
	return d.spreadLeastPast(u, q, sp, math.MaxInt64)
}

// spreadLeastPast is spreadLeast, but stops at the first accepted call
// that needs more than limit: it then returns that call's need, which is
// past limit and may be less than spreadLeast.
func (d *sends) spreadLeastPast(u int, q uint64, sp int64, limit int64) int64 {
	nd := newNeed(q, sp, 1)
	var acc u128 // the deficit the accepted calls leave on the logged instants
	prev := int64(0)
	at, cost := d.accepted(u)
	for j, t := range at {
		if t > prev {
			acc = refill(acc, q, t-prev)
		}
		prev = t
		c := int64(1)
		if cost != nil {
			c = cost[j]
		}
		acc = acc.add(mul64(uint64(c), day))
		if nd.past(acc, c) && nd.raise(acc, c) > limit {
			return nd.least
		}
	}
	return nd.least
}

// need is the least burst a walk of the calls certain to take has found
// so far, within spread sp at q units a day.
type need struct {
	grace u128 // q·sp
	least int64
	top   u128 // least, times a day, plus grace: a deficit past it raises least
}

func newNeed(q uint64, sp, least int64) need {
	grace := mul64(q, uint64(sp))
	return need{grace: grace, least: least, top: grace.add(mul64(uint64(least), day))}
}

// past reports whether a call of cost c that leaves deficit acc needs
// more than the least burst so far.
func (n *need) past(acc u128, c int64) bool {
	return c > n.least || n.top.less(acc)
}

// raise takes a call of cost c that leaves deficit acc, needing more
// than the least burst so far (past), and returns the least burst now.
func (n *need) raise(acc u128, c int64) int64 {
	n.least = max(n.least, c)
	if n.grace.less(acc) {
		n.least = max(n.least, acc.sub(n.grace).ceilDay())
	}
	n.top = n.grace.add(mul64(uint64(n.least), day))
	return n.least
}

// spreadWide fills wide with each refusal's most burst that possibly
// explains it, for a bucket of unit u at q units a day within spread sp;
// the refusals in drain (by rank; nil: none) may take from it too.
func (d *sends) spreadWide(u int, q uint64, sp int64, drain bitset, wide []int64) {
	d.spreadUpper(u, q, sp, drain, wide, nil, math.MinInt64)
}

// spreadUpper walks the refusals in order for the most burst that
// possibly explains each (see spreadWide), filling wide unless nil, and
// returns the least of those of the refusals in target (math.MaxInt64
// without): at the first below limit, it stops there.
func (d *sends) spreadUpper(u int, q uint64, sp int64, drain bitset, wide []int64, target bitset, limit int64) int64 {
	return d.spreadUpperTo(u, q, sp, drain, wide, target, limit, math.MaxInt64)
}

// spreadUpperTo is spreadUpper for buckets of at most burst most: a
// bucket's deficit never passes its burst (a call finding no room takes
// nothing), so the deficit the calls before s_r−sp leave is held to it
// at each call.
func (d *sends) spreadUpperTo(u int, q uint64, sp int64, drain bitset, wide []int64, target bitset, limit, most int64) int64 {
	top := u128{math.MaxUint64, math.MaxUint64}
	if most < math.MaxInt64 {
		top = mul64(uint64(most), day)
	}
	upper := int64(math.MaxInt64)
	var poss u128            // the deficit of the calls that may take, on the logged instants
	pi, pprev := 0, int64(0) // the calls taken into poss, and its instant
	lo, hi := 0, 0           // the calls logged in [s_r-sp, s_r+sp]
	var inWindow int64       // their cost, of those that may take
	takes := func(k int) bool { return !d.refused[k] || drain != nil && drain.has(d.rankOf(k)) }
	for r, k := range d.refIdx {
		i, t := int(k), d.at[k]
		for ; pi < len(d.at) && d.at[pi] < t-sp; pi++ {
			if pi > 0 && d.at[pi] > pprev {
				poss = refill(poss, q, d.at[pi]-pprev)
			}
			pprev = d.at[pi]
			if takes(pi) {
				if poss = poss.add(mul64(uint64(d.costOf(u, pi)), day)); top.less(poss) {
					poss = top
				}
			}
		}
		for ; hi < len(d.at) && d.at[hi] <= t+sp; hi++ {
			if takes(hi) {
				inWindow += d.costOf(u, hi)
			}
		}
		for ; lo < hi && d.at[lo] < t-sp; lo++ {
			if takes(lo) {
				inWindow -= d.costOf(u, lo)
			}
		}
		found := poss
		if pi > 0 {
			found = refill(poss, q, t-sp-pprev)
		}
		c := d.costOf(u, i)
		other := inWindow // less its own cost, when it may take
		if takes(i) {
			other -= c
		}
		w := found.add(mul64(uint64(other+c), day)).ceilDay() - 1
		if wide != nil {
			wide[r] = w
		}
		if target != nil && w < upper && target.has(r) {
			if upper = w; upper < limit {
				return upper
			}
		}
	}
	return upper
}

// rankOf is the rank among the refusals of refused call k.
func (d *sends) rankOf(k int) int {
	return int(k - int(d.acc[k]))
}

// spreadFit judges buckets of unit u within spread sp against targets
// (the refusals the bucket must explain) under reading rd.
type spreadFit struct {
	d      *sends
	u      int
	sp     int64
	target bitset
	drain  bitset // the refusals that may take: under RefusedCount, the others
	steps  int64
	// the least burst at leastQ (spreadLeast's), when haveLeast: the rate
	// found for a burst is the last one tested, and each candidate at it
	// needs it again
	leastQ    uint64
	least     int64
	haveLeast bool
	pairs     []spreadPair // the runs of calls that missed a rate (spreadRate's)
	// sure, when not nil, is by rank the most burst at which each drain
	// may have found no room (spreadSure's): past it, it certainly took
	sure []int64
}

func newSpreadFit(d *sends, u int, sp int64, rd Reading, target bitset) *spreadFit {
	g := &spreadFit{d: d, u: u, sp: sp, target: target}
	if rd == RefusedCount {
		g.drain = complement(len(d.refIdx), target)
	}
	return g
}

// curve is the least burst the accepted calls certainly need at q, and
// the most with possibly no room for any target (math.MaxInt64 without).
func (g *spreadFit) curve(q uint64) (lower, upper int64) {
	lower = g.leastPast(q, math.MaxInt64)
	upper = g.d.spreadUpper(g.u, q, g.sp, g.drain, nil, g.target, math.MinInt64)
	g.steps += 2 * int64(g.d.n())
	return lower, upper
}

// leastPast is spreadLeastPast for g's unit and spread, remembering the
// last least burst found whole.
func (g *spreadFit) leastPast(q uint64, limit int64) int64 {
	if g.haveLeast && g.leastQ == q {
		return g.least
	}
	var l int64
	if g.sure != nil {
		l = g.d.spreadLeastSure(g.u, q, g.sp, limit, g.sure)
	} else {
		l = g.d.spreadLeastPast(g.u, q, g.sp, limit)
	}
	if l <= limit {
		g.leastQ, g.least, g.haveLeast = q, l, true
	}
	return l
}

// lowerPast is curve's lower at q, or, where it is past limit, a value
// past limit: the accepted calls are walked only until one needs more.
func (g *spreadFit) lowerPast(q uint64, limit int64) int64 {
	g.steps += 2 * int64(g.d.n())
	return g.leastPast(q, limit)
}

// upperBelow is curve's upper at q, or, where it is below limit, a value
// below limit: the refusals are walked only until a target's bound is.
func (g *spreadFit) upperBelow(q uint64, limit int64) int64 {
	g.steps += 2 * int64(g.d.n())
	return g.d.spreadUpper(g.u, q, g.sp, g.drain, nil, g.target, limit)
}

// maxSpreadJumps bounds the jumps toward the least and the most rate;
// where they stop short the extent still holds every bucket that fits.
const maxSpreadJumps = 48

// region is the extent of the buckets within the spread: both curves fall
// as the rate rises, so a rate q fits some burst when lower(q) ≤
// upper(q). From a rate that does not, the least rate that does is at
// least where lower falls to upper(q), and the most at most where upper
// falls to lower(q): forced jumps, each exact.
func (g *spreadFit) region() region {
	return g.regionIn(1, maxRegionRate)
}

// regionIn is region, of the rates from qlo to qhi: those outside hold no
// bucket that fits, and the jumps seek none past qhi.
func (g *spreadFit) regionIn(qlo, qhi uint64) region {
	exact := true
	for jumps := 0; ; jumps++ {
		l, u := g.curve(qlo)
		if l <= u {
			break
		}
		if jumps == maxSpreadJumps {
			exact = false
			break
		}
		if g.lowerPast(qhi, u) > u {
			return region{Empty: true}
		}
		qlo = bisectRate(qlo, qhi, func(q uint64) bool { return g.lowerPast(q, u) <= u })
	}
	for jumps := 0; ; jumps++ {
		l, u := g.curve(qhi)
		if l <= u {
			break
		}
		if jumps == maxSpreadJumps {
			exact = false
			break
		}
		if g.upperBelow(qlo, l) < l {
			return region{Empty: true}
		}
		qhi = bisectRate(qlo, qhi, func(q uint64) bool { return g.upperBelow(q, l) < l }) - 1
	}
	if qlo > qhi {
		return region{Empty: true}
	}
	_, top := g.curve(qlo)
	bottom, _ := g.curve(qhi)
	rg := region{RateMin: int64(qlo), RateMax: int64(qhi), BurstMin: clampInt(bottom), BurstMax: clampInt(top), Exact: exact}
	rg.RateOpen = qhi == maxRegionRate
	return rg
}

// The bursts a spread's candidates are sampled at: every one up to
// spreadAllBursts, then spreadBurstRatio apart, spreadSearched at most a
// unit (the region of the buckets chosen is then found exactly).
const (
	spreadAllBursts  = 16
	spreadBurstRatio = 1.06
	spreadSearched   = 64
)

// spreadBuckets are the bucket candidates of one spread under each
// reading: per unit, the bucket that explains every refusal alone where
// one does, and for bursts from the least up (sampled as above) the least rate that keeps the
// accepted calls, at its least burst. Under RefusedCount every other
// refusal may take from it: a candidate does not yet know which the
// other rules explain (refineSpreadBuckets does). Only the sampled
// RefusedCount candidates' passes keep their bounds: bounds says how to
// make each pass's (spreadBounds), for the candidates kept.
func (d *sends) spreadBuckets(sp int64, single bool) (out [2][]Candidate, bounds map[*pass]spreadBound) {
	n := len(d.refIdx)
	bounds = map[*pass]spreadBound{}
	if n == 0 || d.n() < 2 {
		return out, bounds
	}
	all := complement(n, newBitset(n))
	for u := -1; u < len(d.units); u++ {
		g := newSpreadFit(d, u, sp, RefusedFree, all)
		rg := g.region()
		if !rg.Empty && rg.Exact {
			q := uint64(rg.RateMin)
			wide := lendWide(n)
			d.spreadWide(u, q, sp, g.drain, wide)
			for _, rd := range []Reading{RefusedCount, RefusedFree} {
				c := g.candidate(q, rd, wide, false)
				bounds[c.pass] = spreadBound{u: u, q: q, count: g.drain != nil}
				out[rd] = append(out[rd], c)
			}
			giveWide(wide)
		}
		if single && rg.Exact {
			continue // no sampled bucket explains every refusal alone
		}
		made := g.sampled(all)
		for i := range made {
			bounds[made[i].pass] = spreadBound{u: u, q: uint64(made[i].PerDay), count: made[i].Reading == RefusedCount}
			out[made[i].Reading] = append(out[made[i].Reading], made[i])
		}
	}
	return out, bounds
}

// spreadBound is how a spread bucket candidate's bounds are made: for
// unit u at q units a day, with every refusal taking from the bucket
// (count) or none.
type spreadBound struct {
	u     int
	q     uint64
	count bool
}

// spreadBounds makes again, within spread sp, the bounds of the passes of
// cands that bounds names: spreadWide's, as the candidates were made on.
func (d *sends) spreadBounds(sp int64, cands []*Candidate, bounds map[*pass]spreadBound) {
	n := len(d.refIdx)
	all := complement(n, newBitset(n))
	eachOnCores(len(cands), func(i int) {
		p := cands[i].pass
		b, ok := bounds[p]
		if !ok || p.wide[RefusedFree] != nil {
			return
		}
		var drain bitset
		if b.count {
			drain = all
		}
		wide := lendWide(n)
		d.spreadWide(b.u, b.q, sp, drain, wide)
		// The bounds are the same under both readings, and no one writes them.
		p.wide[RefusedCount], p.wide[RefusedFree] = wide, wide
	})
}

// sampled makes the candidates of g's unit for bursts from the least up
// (see spreadBuckets), under RefusedFree then RefusedCount for each: the
// least rate of each burst is found here, each burst's candidates by
// workers meanwhile (one walk over the calls for both readings' bounds).
func (g *spreadFit) sampled(all bitset) []Candidate {
	d, u, sp := g.d, g.u, g.sp
	made := make([]Candidate, 2*spreadSearched)
	todo := make([]spreadJob, spreadSearched) // made[2i], made[2i+1] are todo[i]'s, sent as i
	jobs := make(chan int, len(todo))
	work := func(i int) {
		free := lendWide(len(d.refIdx))
		made[2*i], made[2*i+1] = todo[i].candidates(d, u, sp, free, lendWide(len(d.refIdx)))
		giveWide(free)
	}
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		wg.Go(func() {
			for i := range jobs {
				work(i)
			}
		})
	}
	count := 0
	lo, hi := d.rateRange(u)
	qlo, q := uint64(lo), uint64(hi)
	from, to := d.spreadLeast(u, q, sp), d.spreadLeast(u, qlo, sp)
	for b, k := from, 0; b < to && k < spreadSearched; k++ {
		// the least rate falls as the burst grows: the last one bounds it
		q = g.leastRate(qlo, q, b)
		least := g.leastPast(q, math.MaxInt64)
		todo[count] = spreadJob{q: q, least: least, steps: g.steps + 2*int64(d.n())}
		g.steps += 4 * int64(d.n())
		jobs <- count
		count++
		b = nextBurst(b)
	}
	close(jobs)
	for i := range jobs { // the searches are done: help with the bounds
		work(i)
	}
	wg.Wait()
	return made[:2*count]
}

// leastRate is the least rate in (lo, hi) that keeps the accepted calls
// within burst b, or hi (see spreadRate); it counts the steps of the
// bisection that finds it walk by walk, which it replays.
func (g *spreadFit) leastRate(lo, hi uint64, b int64) uint64 {
	if hi < lo { // a bracket past the rates: the bisection's own answer
		return bisectRate(lo, hi, func(q uint64) bool { g.steps += int64(g.d.n()); return g.leastPast(q, b) <= b })
	}
	q, least, walked := g.d.spreadRate(g.u, lo, hi, g.sp, b, &g.pairs)
	if walked {
		g.leastQ, g.least, g.haveLeast = q, least, true
	}
	bisectRate(lo, hi, func(r uint64) bool { g.steps += int64(g.d.n()); return r >= q })
	return q
}

// spreadJob is a sampled burst's pair of bucket candidates to make: at q
// units a day and its least burst, and the steps its spreadFit had
// counted when the first (RefusedFree) was made; the second
// (RefusedCount) counts one walk more.
type spreadJob struct {
	q     uint64
	least int64
	steps int64
}

// candidates are the job's bucket under RefusedFree (no refusal taking
// from it) and under RefusedCount (every one taking), their bounds made
// in free and count in one walk. The RefusedCount one keeps its bounds:
// most such candidates are not outdone; most RefusedFree ones are.
func (j spreadJob) candidates(d *sends, u int, sp int64, free, count []int64) (Candidate, Candidate) {
	d.spreadWideBoth(u, j.q, sp, free, count)
	steps := j.steps + 2*int64(d.n())
	return spreadCandidate(d, u, j.q, j.least, j.steps, RefusedFree, free, false), spreadCandidate(d, u, j.q, j.least, steps, RefusedCount, count, true)
}

// spreadCandidate is the bucket at q units a day and burst least as a
// candidate under rd, its set made on the bounds in wide, which its pass
// keeps only if keep (else spreadBounds makes them again).
func spreadCandidate(d *sends, u int, q uint64, least, steps int64, rd Reading, wide []int64, keep bool) Candidate {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	if u >= 0 {
		p.unit = d.units[u]
	}
	p.wide[RefusedCount], p.wide[RefusedFree] = wide, wide
	p.lower[rd], p.steps = clampInt(least), steps
	c := newCandidate(d, p, 24*time.Hour, rule.Bucket, rd)
	c.PerDay = int64(q)
	if !keep {
		p.wide = [2][]int64{}
	}
	return c
}

// candidate is the bucket at q units a day at its least burst, as a
// candidate under rd whose set is made on the spread's bounds in wide.
func (g *spreadFit) candidate(q uint64, rd Reading, wide []int64, keep bool) Candidate {
	least := g.leastPast(q, math.MaxInt64)
	g.steps += 2 * int64(g.d.n())
	return spreadCandidate(g.d, g.u, q, least, g.steps, rd, wide, keep)
}

// refineSpreadBuckets bounds each bucket rule of f by its region, as
// refineBuckets does for an exact fit: a bucket fits within spread sp
// where its region there is not empty, and its ranges are those of its
// region within spread wide, when wider (see bucketSpread).
//
// A bucket's targets are the refusals no other rule explains: first
// those the other buckets leave at their candidates' points. Any bucket
// of another's region may explain more, and a hidden bucket elsewhere in
// that region may leave this one fewer refusals than the point does; so
// each bucket's set is then widened to the refusals a bucket of its
// region may explain (see mayExplain) and the regions are found again on
// the targets that leaves, until no set grows, as long as every bucket
// keeps a bounded region: where one would not (the others may explain
// all it explains, and it is then bounded by nothing), the last bounded
// round's ranges are kept. In the calls' ground truth, seed 20's middle
// bucket (13/5s burst 19) lay outside the ranges found beside the
// points, one of its targets a refusal it had room for. The rounds run
// where the boxes do (see boxNarrow): on a log of more than 40,000
// calls the ranges are those beside the points (a million calls took
// 18 s with them, 10 s without, on one machine).
func refineSpreadBuckets(d *sends, f *Fit, cands []*Candidate, sp, wide int64, windows []time.Duration, memo map[string]region) (empty []*Candidate) {
	n := len(d.refIdx)
	chosen := make([]*Candidate, len(f.Rules)) // before any rate is renamed
	sets := make([]bitset, len(f.Rules))
	for k, r := range f.Rules {
		chosen[k] = find(cands, r)
		sets[k] = chosen[k].set
	}
	var kept []Rule // the last round's rules, every bucket bounded
	for round := 0; ; round++ {
		grown := false
		next := slices.Clone(sets)
		for k := range f.Rules {
			if f.Rules[k].Kind != rule.Bucket {
				continue
			}
			target := complement(n, unionSets(n, slices.Concat(sets[:k], sets[k+1:])))
			rg, fits := refineSpreadBucket(d, f, &f.Rules[k], chosen[k], target, sp, wide, windows, memo)
			switch {
			case !fits && round == 0:
				empty = append(empty, chosen[k])
				continue
			case round > 0 && (!fits || unbounded(rg) && !(kept[k].RateOpen || kept[k].Max == 0)):
				copy(f.Rules, kept)
				return nil
			case !fits || unbounded(rg):
				continue
			case round == maxTargetRounds || pairBudget(d) < narrowPasses*int64(d.n()):
				continue
			}
			g := newSpreadFit(d, slices.Index(d.units, f.Rules[k].Unit), max(sp, wide), f.Reading, target)
			if more := g.mayExplain(rg); !subset(more, sets[k]) {
				next[k] = unionSets(n, []bitset{sets[k], more})
				grown = true
			}
		}
		if !grown || len(empty) > 0 {
			return empty
		}
		kept, sets = slices.Clone(f.Rules), next
	}
}

// unbounded: rg leaves the rate or the burst without an upper bound.
func unbounded(rg region) bool { return rg.RateOpen || rg.BurstMax == math.MaxInt }

// maxTargetRounds bounds the rounds refineSpreadBuckets widens the sets
// in; past it the last round's ranges are kept.
const maxTargetRounds = 4

// mayExplain is the refusals (by rank) some bucket of g's region rg may
// explain, the refusals outside its targets taking from it as they may
// over the region (sorted as a box is, see sortBox): the most burst
// possibly explaining a refusal falls as the rate rises, so it is the
// least rate's, set against the least burst.
func (g *spreadFit) mayExplain(rg region) bitset {
	n := len(g.d.refIdx)
	drain := g.drain
	if drain != nil {
		if sb, ok := g.shrinkBox(spreadBox{box: rg, certain: newBitset(n), possible: slices.Clone(drain)}, g.steps+pairBudget(g.d)); ok {
			drain = sb.possible
		}
	}
	wide := make([]int64, n)
	g.d.spreadUpperTo(g.u, uint64(rg.RateMin), g.sp, drain, wide, nil, math.MinInt64, int64(rg.BurstMax))
	out := newBitset(n)
	for r, w := range wide {
		if w >= int64(rg.BurstMin) {
			out.add(r)
		}
	}
	return out
}

// refineSpreadBucket bounds r, a bucket rule of f chosen as candidate c,
// by its region beside target: the region its ranges are taken from, and
// false where no bucket fits within sp.
func refineSpreadBucket(d *sends, f *Fit, r *Rule, c *Candidate, target bitset, sp, wide int64, windows []time.Duration, memo map[string]region) (region, bool) {
	u := slices.Index(d.units, r.Unit)
	regionAt := func(s int64, narrow bool) (*spreadFit, region) {
		g := newSpreadFit(d, u, s, f.Reading, target)
		key := fmt.Sprint(s, r.Unit, f.Reading, target) // the same at every offset
		rg, ok := memo[key]
		if !ok {
			rg = g.region()
			memo[key] = rg
		}
		if !narrow {
			return g, rg
		}
		if nr, ok := memo[key+" sure"]; ok {
			if nr.RateMin > 0 { // the rate narrowed left g's bounds at
				g.sureAt(uint64(nr.RateMin))
			}
			return g, memo[key+" narrowed"]
		}
		rg, base := g.sliced(g.narrowed(rg))
		rg = g.boxNarrow(rg, pairBudget(d))
		memo[key+" narrowed"], memo[key+" sure"] = rg, region{RateMin: int64(base)}
		return g, rg
	}
	if _, rg := regionAt(sp, false); rg.Empty {
		// With the refusals the others explain taking from it, no
		// bucket explains the rest: the candidate does not fit here.
		return rg, false
	}
	// a wider spread's region holds the narrower's; the drains
	// certain to take narrow it (see spreadLeastSure)
	g, rg := regionAt(max(sp, wide), true)
	if rg.Empty {
		g, rg = regionAt(max(sp, wide), false)
	}
	q := r.setExtent(rg, c.PerDay, windows)
	lower, upper := g.curve(q)
	r.Burst = clampInt(max(lower, int64(r.Min)))
	if int64(r.Burst) > upper {
		q = r.nameLeast(g, windows)
	}
	r.perDay = int64(q)
	return rg, true
}

// nameLeast names r, a bucket whose named rate keeps no burst in its
// range, at the least rate of its ranges and the least burst the curves
// give there, held within its burst range: never a point outside its own
// ranges (it was named at its candidate's own point, which can lie
// outside them). The region begins where the lower curve meets the upper
// one, so when it is exact that burst is within both curves there.
func (r *Rule) nameLeast(g *spreadFit, windows []time.Duration) uint64 {
	q := uint64(r.RateMin)
	r.Window, r.Rate = nameRate(r.RateMin, r.RateMin, r.RateMin, windows)
	lower, _ := g.curve(q)
	b := max(lower, int64(r.Min))
	if r.Max > 0 {
		b = min(b, int64(r.Max))
	}
	r.Burst = clampInt(b)
	return q
}

// bucketCandidates are the spread's buckets under each reading, less
// those another bucket or a sliding window outdoes.
func (ps *spreadPasses) bucketCandidates() [2][]Candidate {
	var out [2][]Candidate
	found, bounds := ps.d.spreadBuckets(ps.sp, ps.single)
	var kept []*Candidate
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		bs := found[rd]
		all := make([]*Candidate, 0, len(bs)+len(ps.sliding[rd]))
		for i := range bs {
			all = append(all, &bs[i])
		}
		for i := range ps.sliding[rd] {
			all = append(all, &ps.sliding[rd][i])
		}
		out[rd] = undominated(bs, all)
		for i := range out[rd] {
			kept = append(kept, &out[rd][i])
		}
	}
	ps.d.spreadBounds(ps.sp, kept, bounds)
	giveOutdone(found, kept)
	return out
}

// giveOutdone hands back the bounds of the candidates found that are not
// kept.
func giveOutdone(found [2][]Candidate, kept []*Candidate) {
	keep := map[*pass]bool{}
	for _, c := range kept {
		keep[c.pass] = true
	}
	for rd := range found {
		for _, c := range found[rd] {
			if w := c.pass.wide[RefusedFree]; w != nil && !keep[c.pass] {
				giveWide(w)
			}
		}
	}
}

// bucketRefuses marks the calls a bucket of q units a day and burst b
// has no room for on the logged instants, the accepted calls taking from
// it and under RefusedCount the refused ones it had room for.
func (d *sends) bucketRefuses(u int, q uint64, b int64, rd Reading, refuses []bool) {
	room := mul64(uint64(b), day)
	var def u128
	prev := int64(0)
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		need := def.add(mul64(uint64(d.costOf(u, i)), day))
		if room.less(need) {
			refuses[i] = true
			if !d.refused[i] {
				def = need // the log says it was taken
			}
			continue
		}
		if !d.refused[i] || rd == RefusedCount {
			def = need
		}
	}
}

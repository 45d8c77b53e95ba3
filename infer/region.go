package infer

import (
	"math"
	"math/bits"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// A bucket's region is every (rate, burst) at which it keeps every
// accepted call of the log and explains a set of refusals, its targets
// (those no other rule of a contract explains). It is found exactly, in
// integer units a day, from two curves of the rate q:
//
//   - lower(q), the least burst that has room for every accepted call;
//   - upper(q), the most burst with no room for any target.
//
// The bucket's deficit below full does not depend on its burst (see
// bucketFill). With the log's admissions given, the deficit before every
// call is non-increasing in q: one step is max(0, def + cost − q·dt),
// non-increasing in q and non-decreasing in def, so by induction each
// call's need is too. Both curves are therefore non-increasing in q, and
// for a burst B the rates that fit are one interval:
//
//	lo(B) = least q with lower(q) ≤ B,  hi(B) = most q with upper(q) ≥ B.
//
// Both are non-increasing in B, so the region's extent is burst
// [bmin, bmax] and rate [lo(bmax), hi(bmin)], where bmin and bmax are the
// least and the most burst with lo(B) ≤ hi(B). The region may have holes
// (a burst with no rate between two that have one); its extent holds
// every fitting value all the same.
//
// The admissions are the log's only when refused calls take nothing: under
// "refused calls do not count", or under "refused calls count" when the
// bucket explains every refusal (a call it explains had no room, and
// drains nothing). Under "refused calls count" beside other rules, a call
// another rule refused drains the bucket when it had room, which more rate
// can bring about. The region is then bounded from outside: lower from the
// deficit where only the refusals known to drain do (certain), upper from
// the one where every refusal that may drain does (possible), both
// monotone, each on its side of the true deficit at every point that
// fits. A pass at the extent's corners then sorts the refusals: one that
// has room even with the most deficit at the least rate and burst drains
// at every point of the extent, one that has none with the least deficit
// at the most rate and burst drains at none; the extent is found again
// until the sorting stops. Where every refusal is sorted the admissions
// are known and the extent is exact; else the corners are judged exactly,
// and where one does not fit the extent holds every fitting value and may
// be wider.
type region struct {
	RateMin, RateMax   int64 // units a day
	BurstMin, BurstMax int   // BurstMax math.MaxInt: no upper bound (no targets)
	// Empty: no bucket of the unit explains the targets and keeps the
	// accepted calls.
	Empty bool
	// RateOpen: the log sets no upper bound on the rate (a target met the
	// bucket at the very instant of the calls that emptied it, or cost
	// more than any burst it allows): RateMax is the most searched.
	RateOpen bool
	// Exact: the extent's corners fit; else the extent is an outer bound.
	Exact bool
}

// maxRegionRate is the most rate searched, in units a day: past it every
// gap of a nanosecond refills more than a day of any realistic traffic.
const maxRegionRate = uint64(1) << 61

// maxRegionJumps bounds the steps toward the least and the most burst;
// each is exact, and where they stop short the extent found holds every
// fitting value all the same.
const maxRegionJumps = 64

// regionFit judges buckets of unit u (-1: calls) against targets under
// reading rd.
type regionFit struct {
	d      *sends
	u      int
	rd     Reading
	target bitset
	// drain: refusals outside the targets may drain the bucket (under
	// RefusedCount): the curves bound the region from outside, certain
	// the refusals (by rank) known to drain it, possible those that may.
	drain             bool
	certain, possible bitset
	steps             int64
}

func newRegionFit(d *sends, u int, rd Reading, target bitset) *regionFit {
	g := &regionFit{d: d, u: u, rd: rd, target: target}
	g.drain = rd == RefusedCount && target.count() < len(d.refIdx)
	if g.drain {
		g.certain, g.possible = newBitset(len(d.refIdx)), complement(len(d.refIdx), target)
	}
	return g
}

// curve is lower(q) and upper(q); upper is math.MaxInt64 without targets.
func (g *regionFit) curve(q uint64) (lower, upper int64) {
	d := g.d
	var lo, hi, most u128 // deficits without and with the drains; the most need
	least := u128{math.MaxUint64, math.MaxUint64}
	prev, r := int64(0), 0
	for i, t := range d.at {
		if i > 0 && t > prev {
			lo, hi = refill(lo, q, t-prev), refill(hi, q, t-prev)
		}
		prev = t
		c := mul64(uint64(d.costOf(g.u, i)), day)
		switch {
		case !d.refused[i]:
			lo = lo.add(c)
			hi = hi.add(c)
			if most.less(lo) {
				most = lo
			}
		case g.target.has(r):
			if need := hi.add(c); need.less(least) {
				least = need
			}
			r++
		default:
			if g.drain && g.possible.has(r) {
				hi = hi.add(c)
			}
			if g.drain && g.certain.has(r) {
				lo = lo.add(c)
			}
			r++
		}
	}
	g.steps += int64(len(d.at))
	lower = max(1, most.ceilDay())
	upper = int64(math.MaxInt64)
	if least.hi != math.MaxUint64 {
		upper = least.ceilDay() - 1
	}
	return lower, upper
}

// loAt is the least rate at which burst b keeps every accepted call, 0
// when none does (see leastRoom).
func (g *regionFit) loAt(b int64) uint64 {
	q, steps := g.d.leastRoom(g.u, b, 1, g.certain)
	g.steps += steps
	return q
}

// hiAt is the most rate from q up at which burst b has no room for any
// target, given that q is such a rate; maxRegionRate when every rate is.
func (g *regionFit) hiAt(b int64, q uint64) uint64 {
	if _, u := g.curve(maxRegionRate); u >= b {
		return maxRegionRate
	}
	return searchRate(q, func(q uint64) bool { _, u := g.curve(q); return u < b }) - 1
}

// searchRate is the least rate above lo at which the monotone predicate
// ok holds, ok failing at lo and holding at maxRegionRate: a geometric
// search for the bracket, then bisection on the integers.
func searchRate(lo uint64, ok func(uint64) bool) uint64 {
	hi := min(max(2*lo, lo+1), maxRegionRate)
	for !ok(hi) {
		lo, hi = hi, min(2*hi, maxRegionRate)
	}
	return bisectRate(lo, hi, ok)
}

// region finds the extent of the region (see the type), sorting the
// refusals that may drain the bucket until the sorting stops.
func (g *regionFit) region() region {
	rg := g.extent()
	for range maxSorts {
		if !g.drain || rg.Empty || !g.sort(rg) {
			break
		}
		rg = g.extent()
	}
	if g.drain && !rg.Empty && rg.Exact && !g.sorted() {
		rg.Exact = g.fits(uint64(rg.RateMax), int64(rg.BurstMin)) && g.fits(uint64(rg.RateMin), int64(rg.BurstMax))
	}
	return rg
}

// maxSorts bounds the rounds of sorting.
const maxSorts = 8

// sorted reports whether every refusal outside the targets is known to
// drain the bucket or known not to.
func (g *regionFit) sorted() bool {
	for i, w := range g.possible {
		if w&^g.certain[i] != 0 {
			return false
		}
	}
	return true
}

// sort runs the least deficit at the extent's most rate and the most
// deficit at its least rate side by side, and sorts each refusal that may
// drain: known to (room with the most deficit for the least burst) or
// known not to (no room with the least deficit for the most burst). It
// reports whether it sorted one.
func (g *regionFit) sort(rg region) bool {
	d := g.d
	qlo, qhi := uint64(rg.RateMin), uint64(rg.RateMax)
	least, most := mul64(uint64(rg.BurstMin), day), mul64(uint64(rg.BurstMax), day)
	var lo, hi u128 // the least deficit at qhi, the most at qlo
	prev, r, moved := int64(0), 0, false
	for i, t := range d.at {
		if i > 0 && t > prev {
			lo, hi = refill(lo, qhi, t-prev), refill(hi, qlo, t-prev)
		}
		prev = t
		c := mul64(uint64(d.costOf(g.u, i)), day)
		switch {
		case !d.refused[i]:
			lo, hi = lo.add(c), hi.add(c)
			continue
		case g.target.has(r) || !g.possible.has(r) || g.certain.has(r):
		case most.less(lo.add(c)):
			g.possible[r/64] &^= 1 << (r % 64)
			moved = true
		case !least.less(hi.add(c)):
			g.certain.add(r)
			moved = true
		}
		if g.certain.has(r) {
			lo = lo.add(c)
		}
		if g.possible.has(r) {
			hi = hi.add(c)
		}
		r++
	}
	g.steps += int64(len(d.at))
	return moved
}

// extent finds the extent of the region the curves bound.
func (g *regionFit) extent() region {
	_, top := g.curve(1) // no burst above it explains the targets
	bottom, _ := g.curve(maxRegionRate)
	if g.target.count() == 0 {
		// Nothing to explain: every burst from the least at the most rate,
		// at every rate from the least that burst allows, fits.
		return region{BurstMin: clampInt(bottom), BurstMax: math.MaxInt, RateMin: 1, RateMax: int64(maxRegionRate), RateOpen: true, Exact: true}
	}
	rg := region{Exact: true}
	// The most burst, from the top: where b fits at no rate, no burst
	// above upper(lo(b)) does. This walk is the cheaper one, and finds an
	// empty region first.
	b := top
	for jumps := 0; ; jumps++ {
		l := g.loAt(b)
		if l == 0 {
			return region{Empty: true}
		}
		_, u := g.curve(l)
		if u >= b || jumps == maxRegionJumps {
			rg.BurstMax, rg.RateMin, rg.Exact = clampInt(b), int64(l), u >= b
			break
		}
		b = u
	}
	// The least burst. At burst b the rates that fit are [lo(b), hi(b)]:
	// none when upper(lo(b)) < b, and then no burst below lower(hi(b))
	// fits either, hi(b) being the most rate b allows any target.
	b, below := bottom, uint64(maxRegionRate)
	for jumps := 0; ; jumps++ {
		if b > int64(rg.BurstMax) {
			return region{Empty: true}
		}
		l := g.loAt(b)
		_, u := g.curve(l)
		if u >= b {
			rg.BurstMin, rg.RateMax = clampInt(b), int64(g.hiAt(b, max(l, 1)))
			break
		}
		if jumps == maxRegionJumps {
			rg.BurstMin, rg.RateMax, rg.Exact = clampInt(b), int64(l), false // hi(b) < l
			break
		}
		// hi(b) < l: a rate h at or above the most rate below l at which
		// b has no room for any target (there is one: b <= upper(1)), to
		// within a part in 128; no burst below lower(h) fits. hi falls as
		// b grows: the last h bounds it. Burst b itself fits at no rate:
		// where h, near as it is, lies too close to l for lower(h) to pass
		// b, the walk goes on from b+1.
		h := nearDown(min(l, below), func(q uint64) bool { _, u := g.curve(q); return u < b })
		next, _ := g.curve(h)
		b, below = max(next, b+1), h
	}
	rg.RateOpen = uint64(rg.RateMax) == maxRegionRate
	return rg
}

// nearDown is bisectNear below hi, where ok holds: the bracket is found
// by halving.
func nearDown(hi uint64, ok func(uint64) bool) uint64 {
	lo := hi / 2
	for lo > 0 && ok(lo) {
		hi, lo = lo, lo/2
	}
	return bisectNear(lo, hi, ok)
}

// bisectNear narrows lo (which does not fit) and hi (which does) until
// they are within a part in 128 of each other, and returns hi: at or
// above the least rate that fits.
func bisectNear(lo, hi uint64, fits func(uint64) bool) uint64 {
	for hi-lo > max(1, lo/128) {
		if mid := lo + (hi-lo)/2; fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// leastRoom is the least rate from q up at which a bucket of burst b has
// room for every accepted call, the refusals in drained (by rank; nil:
// none) taking their cost too, and the steps it took; 0 when no rate
// does. With the drains given, a call's need is the most, over the
// earlier calls j, of the units taken from j to it (its own included)
// less the refill since j: a line falling with the rate. One pass at q
// finds each call without room and the line from the last call that
// found the bucket full, and no rate below where that line meets b has
// room for it: the next q. Every jump is forced, so the first q with room
// for every call is the least; a pass that finds a call without room at
// the instant of the last full bucket proves no rate has room.
func (d *sends) leastRoom(u int, b int64, q uint64, drained bitset) (uint64, int64) {
	var steps int64
	for range maxRoomJumps {
		next, ok := d.roomPass(u, b, q, drained)
		steps += int64(d.n())
		switch {
		case ok:
			return q, steps
		case next == 0 || next > maxRegionRate:
			return 0, steps
		}
		q = next
	}
	// Past the jumps, bisect between q (no room) and the most rate.
	ok := func(r uint64) bool { _, ok := d.roomPass(u, b, r, drained); steps += int64(d.n()); return ok }
	if !ok(maxRegionRate) {
		return 0, steps
	}
	return bisectRate(q, maxRegionRate, ok), steps
}

// lineRate is the least rate (units a day) that refills over units in
// dt ns, and whether there is one: none where dt is 0 or it
// would pass 2^64 units a day.
func lineRate(over, dt uint64) (uint64, bool) {
	o := mul64(over, day)
	if dt == 0 || o.hi >= dt {
		return 0, false
	}
	q, rem := bits.Div64(o.hi, o.lo, dt)
	if rem != 0 {
		q++
	}
	return q, true
}

// maxRoomJumps bounds leastRoom's jumps.
const maxRoomJumps = 48

// roomPass runs a bucket of burst b at q units a day: ok when it has
// room for every accepted call, else the least rate the lines of the
// calls without room allow (0: none does).
func (d *sends) roomPass(u int, b int64, q uint64, drained bitset) (next uint64, ok bool) {
	room := mul64(uint64(b), day)
	var def u128
	var taken uint64 // units taken since the last full bucket, at start
	start, prev, r := 0, int64(0), 0
	ok = true
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		if def == (u128{}) {
			start, taken = i, 0
		}
		c := uint64(d.costOf(u, i))
		if d.refused[i] {
			if drained != nil && drained.has(r) {
				def, taken = def.add(mul64(c, day)), taken+c
			}
			r++
			continue
		}
		def, taken = def.add(mul64(c, day)), taken+c
		if !room.less(def) {
			continue
		}
		ok = false
		need, some := lineRate(taken-uint64(b), uint64(t-d.at[start]))
		if !some {
			return 0, false
		}
		next = max(next, need)
	}
	return next, ok
}

// fits judges a bucket of q units a day and burst b exactly: room for
// every accepted call, none for a target, and under RefusedCount the
// other refusals draining it when it had room.
func (g *regionFit) fits(q uint64, b int64) bool {
	return g.replay(q, b, nil)
}

// drainsAt are the refusals outside the targets (by rank) that a bucket
// of q units a day and burst b has room for: those that drain it under
// "refused calls count".
func (g *regionFit) drainsAt(q uint64, b int64) bitset {
	drains := newBitset(len(g.d.refIdx))
	g.replay(q, b, drains)
	return drains
}

// replay runs a bucket of q units a day and burst b over the log and
// reports whether it fits (see fits). With drains nil it stops at the
// first call that does not; else it runs to the end, every refusal
// outside the targets that has room draining it, and marks those in
// drains.
func (g *regionFit) replay(q uint64, b int64, drains bitset) bool {
	d := g.d
	room := mul64(uint64(b), day)
	var def u128
	prev, r, ok := int64(0), 0, true
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		need := def.add(mul64(uint64(d.costOf(g.u, i)), day))
		switch {
		case !d.refused[i]:
			ok = ok && !room.less(need)
			def = need
		case g.target.has(r):
			ok = ok && room.less(need)
			r++
		default:
			if (g.rd == RefusedCount || drains != nil) && !room.less(need) {
				def = need
				if drains != nil {
					drains.add(r)
				}
			}
			r++
		}
		if !ok && drains == nil {
			return false
		}
	}
	g.steps += int64(len(d.at))
	return ok
}

// explainedAt are the refusals (by rank) that a bucket of unit u at q
// units a day and burst b has no room for under reading rd: a refusal it
// has room for takes its cost under RefusedCount.
func (d *sends) explainedAt(u int, q uint64, b int64, rd Reading) bitset {
	set := newBitset(len(d.refIdx))
	room := mul64(uint64(b), day)
	var def u128
	prev, r := int64(0), 0
	for i, t := range d.at {
		if i > 0 && t > prev {
			def = refill(def, q, t-prev)
		}
		prev = t
		need := def.add(mul64(uint64(d.costOf(u, i)), day))
		switch {
		case !d.refused[i]:
			def = need
			continue
		case room.less(need):
			set.add(r)
		case rd == RefusedCount:
			def = need
		}
		r++
	}
	return set
}

// exactBuckets adds, per reading and unit, the bucket that explains every
// refusal alone, where one does, and for each window that explains the
// most of some refusals (no window explains more of them), the bucket that
// explains every refusal it leaves: the sampled search can miss both. It
// records per reading what is proved (no single bucket explains every
// refusal; no window beside one bucket does), and returns per reading
// the size of the least cover the windows and these buckets give (3:
// more than two). Where the windows alone give one of a rule, nothing is
// searched; of two rules, only a bucket alone.
func (res *Result) exactBuckets(d *sends) (covered [2]int) {
	return res.exactWithin(d, pairBudget(d))
}

// exactWithin is exactBuckets within a budget of steps for both readings.
func (res *Result) exactWithin(d *sends, budget int64) (covered [2]int) {
	n := len(d.refIdx)
	if n == 0 || d.n() < 2 {
		return [2]int{1, 1}
	}
	// Each reading's regions are walked on a core of its own as if it
	// had the whole budget; then the readings are taken in turn on the
	// budget they share, each region looked up. A region the shared
	// budget reaches is one the reading's own walk found (it had spent
	// no more before it), so the answer is the one walking both in turn
	// gives.
	var walked [2]map[[2]int]walkedRegion
	walk := func(u int, rd Reading, target bitset) walkedRegion {
		g := newRegionFit(d, u, rd, target)
		return walkedRegion{g.region(), g.steps}
	}
	eachOnCores(len(walked), func(rd int) {
		walked[rd] = map[[2]int]walkedRegion{}
		var own int64
		exactReading(d, res.Candidates, Reading(rd), budget, &own, func(k, u int, target bitset) walkedRegion {
			w := walk(u, Reading(rd), target)
			walked[rd][[2]int{k, u}] = w
			return w
		})
	})
	var spent int64
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		ex := exactReading(d, res.Candidates, rd, budget, &spent, func(k, u int, target bitset) walkedRegion {
			if w, ok := walked[rd][[2]int{k, u}]; ok {
				return w
			}
			// Not reached while the reasoning above holds: a miss would
			// cost a walk, never a wrong region.
			return walk(u, rd, target)
		})
		covered[rd], res.proof[rd] = ex.covered, ex.proof
		for _, pt := range ex.points {
			res.Buckets = append(res.Buckets, d.bucketPoint(pt.u, pt.q, pt.b, rd))
		}
	}
	res.BucketSteps += spent
	return covered
}

// walkedRegion is a region and the steps its walk took.
type walkedRegion struct {
	rg    region
	steps int64
}

// exactFound is what exactReading finds under one reading: the size of
// the least cover (see exactBuckets), what is proved, and the buckets.
type exactFound struct {
	covered int
	proof   bucketProof
	points  []exactPoint
}

// exactPoint is a bucket of unit u at q units a day and burst b.
type exactPoint struct {
	u, b int
	q    uint64
}

// exactReading is exactBuckets under reading rd, the windows being
// cands: the k-th target's region for unit u is regionOf(k, u, target),
// asked while spent is within budget, its steps added to spent.
func exactReading(d *sends, cands []Candidate, rd Reading, budget int64, spent *int64, regionOf func(k, u int, target bitset) walkedRegion) exactFound {
	n := len(d.refIdx)
	ex := exactFound{covered: windowCover(n, cands, rd)}
	ex.proof = bucketProof{single: ex.covered == 1, pairs: ex.covered <= 2}
	if ex.covered == 1 {
		return ex
	}
	targets := []bitset{complement(n, newBitset(n))}
	if ex.covered > 2 {
		for _, w := range maximalWindows(cands, rd) {
			targets = append(targets, complement(n, w.set))
		}
	}
	ex.proof = bucketProof{single: true, pairs: true}
	for k, target := range targets {
		for u := -1; u < len(d.units) && ex.covered > 1; u++ {
			rg := region{}
			if *spent <= budget {
				w := regionOf(k, u, target)
				rg, *spent = w.rg, *spent+w.steps
			}
			switch {
			case *spent <= budget && rg.Empty:
			case *spent <= budget && rg.Exact:
				ex.points = append(ex.points, exactPoint{u: u, q: uint64(rg.RateMin), b: rg.BurstMax})
				ex.covered = min(ex.covered, k+1, 2)
			default:
				// Past the budget, or an outer bound that is not
				// empty: a bucket may fit there, and none was found.
				ex.proof.pairs = ex.proof.pairs && k == 0 && ex.covered > 2
				ex.proof.single = ex.proof.single && k > 0
			}
		}
	}
	return ex
}

// windowCover is the size of the least cover of the n refusals by the
// windows of reading rd: 1, 2, or 3 for more.
func windowCover(n int, cands []Candidate, rd Reading) int {
	ws := maximalWindows(cands, rd)
	for i, a := range ws {
		if a.Explains == n {
			return 1
		}
		for _, b := range ws[i+1:] {
			if union(n, []*Candidate{a, b}).count() == n {
				return 2
			}
		}
	}
	return 3
}

// maxRegionSteps is the least budget of bucket passes the exact search
// may spend on a log (in steps, one a call); a long log gets 40 passes.
const maxRegionSteps = 40_000_000

// bucketProof says what the exact bucket search proved under a reading:
// single, that no one bucket of any rate and burst explains every
// refusal; pairs, that no window beside one bucket does.
type bucketProof struct{ single, pairs bool }

// maximalWindows are the window candidates of reading rd that explain
// refusals, one per set of refusals, less those whose set another's holds.
func maximalWindows(cands []Candidate, rd Reading) []*Candidate {
	var ws []*Candidate
	for i := range cands {
		if c := &cands[i]; c.Reading == rd && c.Explains > 0 {
			ws = append(ws, c)
		}
	}
	ws = distinct(ws)
	var out []*Candidate
	for _, c := range ws {
		if !containsFunc(ws, func(o *Candidate) bool { return o != c && subset(c.set, o.set) }) {
			out = append(out, c)
		}
	}
	return out
}

func containsFunc(cs []*Candidate, f func(*Candidate) bool) bool {
	for _, c := range cs {
		if f(c) {
			return true
		}
	}
	return false
}

// complement is the refusals not in set.
func complement(n int, set bitset) bitset {
	out := newBitset(n)
	for i := range n {
		if !set.has(i) {
			out.add(i)
		}
	}
	return out
}

// bucketPoint is the bucket of unit u at q units a day and burst b, as a
// candidate under rd.
func (d *sends) bucketPoint(u int, q uint64, b int, rd Reading) Candidate {
	p := &pass{lower: [2]int{1, 1}, tightest: [2]int{-1, -1}}
	if u >= 0 {
		p.unit = d.units[u]
	}
	for r := range p.wide {
		p.wide[r] = make([]int64, len(d.refIdx))
	}
	p.steps = d.bucketFill(p, u, q, rd, int64(b))
	p.lower[rd] = b
	c := newCandidate(d, p, 24*time.Hour, rule.Bucket, rd)
	c.PerDay, c.pass = int64(q), nil
	return c
}

package infer

import (
	"slices"

	"github.com/rlcheck/rlcheck/rule"
)

// nearBursts bounds the bursts pairNearSpread takes a pick's refusals at.
const nearBursts = 12

// pairNearSpread is pairSpread's second try beside p, a sampled bucket of
// reading rd beside which no bucket of any unit explains every refusal
// it leaves within the spread, and returns the buckets it found. The
// sampled bursts grow by spreadBurstRatio past spreadAllBursts, and the
// bucket sampled nearest a hidden one can sit a burst or two above it at
// a lower rate: under "refused calls count" it then leaves a refusal the
// hidden bucket explains, and nothing fits beside it. The refusals p's
// unit explains at the least rate of each burst from the sampled one
// below p's up to one above p's (nearBursts of them at most) are taken
// as explained; beside each second bucket found, p's unit's bucket is
// sought again, and both are returned. It adds the passes it walked to
// spent.
func (ps *spreadPasses) pairNearSpread(p Candidate, rd Reading, spent *int64) []Candidate {
	d := ps.d
	n := len(d.refIdx)
	pu := slices.Index(d.units, p.Unit)
	target := complement(n, unionSets(n, append(ps.nearSets(pu, int64(p.AtLeast), rd, spent), p.set)))
	var out []Candidate
	for u := -1; u < len(d.units) && target.count() > 0; u++ {
		ps.eachCorner(u, target, rd, spent, func(b Candidate) bool {
			a, ok := spreadPoint(d, pu, ps.sp, rd, complement(n, b.set), spent)
			if ok {
				out = append(out, b, a)
			}
			return ok
		})
	}
	return out
}

// eachCorner visits unit u's buckets under reading rd that explain every
// refusal of target within the spread, taken at the corners of their
// region (see nearCorners), until visit returns true. It adds the passes
// it walked to spent.
func (ps *spreadPasses) eachCorner(u int, target bitset, rd Reading, spent *int64, visit func(Candidate) bool) {
	g := newSpreadFit(ps.d, u, ps.sp, rd, target)
	rg := g.region()
	*spent += g.steps
	if rg.Empty {
		return
	}
	for _, q := range nearCorners(rg) {
		g.steps = 0
		c, ok := g.pointAt(q, rd)
		*spent += g.steps + int64(ps.d.n()) // and its bounds' walk
		if ok && visit(c) {
			return
		}
	}
}

// nearCorners are the rates pairNearSpread takes a second bucket at in its
// region rg, one after another until the first is found beside it: its
// least, its most and the one midway. What a bucket explains with every
// refusal taking from it shifts along the region, and beside the second
// at one end the first can leave a refusal only the second at the other
// end explains.
func nearCorners(rg region) []uint64 {
	lo, hi := uint64(rg.RateMin), uint64(rg.RateMax)
	if hi <= lo {
		return []uint64{lo}
	}
	return []uint64{lo, hi, lo + (hi-lo)/2}
}

// nearSets are the refusals unit u's bucket explains within the spread
// under reading rd at the least rate of each burst from the one sampled
// below b (b over spreadBurstRatio) up to b+1, at most nearBursts of
// them, spaced evenly. It adds the passes it walked to spent.
func (ps *spreadPasses) nearSets(u int, b int64, rd Reading, spent *int64) []bitset {
	d := ps.d
	n := len(d.refIdx)
	lo := b - 1
	if b > spreadAllBursts {
		lo = int64(float64(b) / spreadBurstRatio)
	}
	lo = max(lo, 1)
	step := max(1, (b+1-lo+nearBursts-1)/nearBursts)
	g := newSpreadFit(d, u, ps.sp, rd, complement(n, newBitset(n)))
	qlo, qhi := d.rateRange(u)
	var drain bitset
	if rd == RefusedCount {
		drain = complement(n, newBitset(n))
	}
	var sets []bitset
	for burst := b + 1; burst >= lo; burst -= step {
		q := g.leastRate(uint64(qlo), uint64(qhi), burst)
		if q >= uint64(qhi) {
			continue // no rate keeps the accepted calls within burst
		}
		wide := make([]int64, n)
		d.spreadWide(u, q, ps.sp, drain, wide)
		g.steps += int64(d.n())
		sets = append(sets, spreadCandidate(d, u, q, burst, 0, rd, wide, false).set)
	}
	*spent += g.steps
	return sets
}

// sampledPast are unit u's bucket candidates under reading rd at the
// bursts past those spreadBuckets samples, where it stopped at
// spreadSearched short of the least burst at the least rate: the same
// bursts on (spreadBurstRatio apart), spreadSearched more at most. A
// unit of tokens can range over thousands of bursts, and its samples
// then stop near 16·1.06⁴⁸ (about 260) where a provider's burst is a few
// hundred or more: with every refusal taking from it, a bucket at a
// burst far from the hidden one's explains fewer refusals, and the cover
// then finds no partner for it. It samples within pastSteps (see
// there), and adds the passes it walked to spent.
func (ps *spreadPasses) sampledPast(u int, rd Reading, spent *int64) []Candidate {
	d := ps.d
	n := len(d.refIdx)
	lo, hi := d.rateRange(u)
	qlo, q := uint64(lo), uint64(hi)
	from, to := d.spreadLeast(u, q, ps.sp), d.spreadLeast(u, qlo, ps.sp)
	*spent += 2 * int64(d.n())
	b := from
	for range spreadSearched {
		b = nextBurst(b)
	}
	if b >= to {
		return nil
	}
	g := newSpreadFit(d, u, ps.sp, rd, complement(n, newBitset(n)))
	var drain bitset // as the sampled candidates': every refusal taking under RefusedCount
	if rd == RefusedCount {
		drain = complement(n, newBitset(n))
	}
	var out []Candidate
	for k := 0; b < to && k < spreadSearched && g.steps < pastSteps; k++ {
		q = g.leastRate(qlo, q, b)
		wide := make([]int64, n)
		d.spreadWide(u, q, ps.sp, drain, wide)
		g.steps += int64(d.n())
		out = append(out, g.candidate(q, rd, wide, true))
		b = nextBurst(b)
	}
	*spent += g.steps
	return out
}

// pastSteps bounds the steps sampledPast spends on a unit: every burst
// of a log of a few thousand calls (about 120,000 steps a burst on 2,000
// calls), a burst or two of a million. Unbounded, sampling a million
// calls past the bursts took 1.2 s of the 7 s a million calls with a
// bucket take to infer (a spread's search for a simpler contract beside
// the exact one samples there too), and found nothing.
const pastSteps = maxRegionSteps / 2

// nextBurst is the burst spreadBuckets samples after b: the next one up
// to spreadAllBursts, then spreadBurstRatio above.
func nextBurst(b int64) int64 {
	if b++; b > spreadAllBursts {
		b = max(b, int64(float64(b-1)*spreadBurstRatio))
	}
	return b
}

// pairPast is with's last try under reading rd where nothing fits even
// once paired (pairSpread): each unit's buckets sampled past the bursts
// spreadBuckets tries (sampledPast) are added, and the picks paired
// again. It is tried once a reading, and only then: a candidate more
// can lead the cover search to a bucket whose region beside the others
// proves empty, and the refits run out before a cover that fits. Tried
// alongside pairSpread, it cost the token buckets' ground truth a seed
// that fit within 5 ms without it (180 tokens/5s burst 226 and 371
// tokens/15s burst 705 then fit nowhere). It reports whether it added a
// bucket.
func (ps *spreadPasses) pairPast(rd Reading) bool {
	if ps.pastPaired[rd] {
		return false
	}
	ps.pastPaired[rd] = true
	var spent int64
	before := len(ps.buckets[rd])
	ps.addSampledPast(rd, &spent)
	if len(ps.buckets[rd]) == before {
		return false
	}
	ps.pairPicks(rd, spent)
	return true
}

// addSampledPast adds to the spread's buckets under reading rd each
// unit's sampledPast candidates that no bucket or sliding window
// outdoes, and adds the passes it walked to spent.
func (ps *spreadPasses) addSampledPast(rd Reading, spent *int64) {
	var past []Candidate
	for u := -1; u < len(ps.d.units); u++ {
		past = append(past, ps.sampledPast(u, rd, spent)...)
	}
	all := make([]*Candidate, 0, len(past)+len(ps.buckets[rd])+len(ps.sliding[rd]))
	for _, cs := range [][]Candidate{past, ps.buckets[rd], ps.sliding[rd]} {
		for i := range cs {
			all = append(all, &cs[i])
		}
	}
	ps.buckets[rd] = append(ps.buckets[rd], undominated(past, all)...)
}

// pairThird is with's try after pairPast under reading rd where still
// nothing fits: beside each two buckets the greedy picks, the bucket of
// each unit that explains every refusal both leave within the spread,
// where the spread's region has one, as thirdBuckets does for an exact
// fit: a third bucket explains few refusals of its own, which the
// sampled search, led by what a bucket explains, rarely samples near.
// It is tried once a reading, within pairSpread's budget, and reports
// whether it added a bucket.
func (ps *spreadPasses) pairThird(rd Reading) bool {
	if ps.thirdPaired[rd] {
		return false
	}
	ps.thirdPaired[rd] = true
	d := ps.d
	n := len(d.refIdx)
	picks := allPicks(n, ps.buckets[rd])
	budget := pairBudget(d)
	var spent int64
	before := len(ps.buckets[rd])
	for i, a := range picks {
		for _, b := range picks[i+1:] {
			target := complement(n, unionSets(n, []bitset{a.set, b.set}))
			found := false
			for u := -1; u < len(d.units) && target.count() > 0 && spent <= budget; u++ {
				if c, ok := spreadPoint(d, u, ps.sp, rd, target, &spent); ok {
					ps.buckets[rd] = append(ps.buckets[rd], c)
					found = true
				}
			}
			if !found && spent <= budget {
				ps.triples[rd] = append(ps.triples[rd], ps.thirdNearSpread(a, b, rd, &spent, budget)...)
			}
		}
	}
	return len(ps.buckets[rd]) > before
}

// thirdNearSpread is pairThird's second try under "refused calls count"
// beside a and b, two sampled buckets beside which no bucket of any unit
// explains every refusal both leave within the spread (or both claim
// them all, and no cover fits), as thirdNear is for an exact fit. With
// every refusal taking from each, two sampled buckets can claim the whole
// log, and a third is then sought for nothing; what each explains with
// only the other's refusals taking from it (drainedSet) is taken as
// explained, and the third sought for the rest (see thirdFor), and, where
// that rest is few refusals (leftFew at most), for the rest less each
// one: a sampled bucket sits off the hidden one and leaves it refusals
// the hidden third does not explain (seed 20 of the calls' ground truth,
// 5/1s burst 10, 13/5s burst 19 and 37/1m burst 56: 12 refusals left,
// whose region within 5 ms held no rate below 266253 a day; less one of
// them, the third came at 223279 a day, burst 19). Beside each third,
// either of the two is sought again first, the other then beside both.
// The buckets found are returned three by three, their sets split (see
// triple.split). It adds the passes it walked to spent, and seeks no
// further third once spent passes budget.
func (ps *spreadPasses) thirdNearSpread(a, b Candidate, rd Reading, spent *int64, budget int64) [][]Candidate {
	d := ps.d
	n := len(d.refIdx)
	if rd != RefusedCount || a.Kind != rule.Bucket || b.Kind != rule.Bucket {
		return nil
	}
	au, bu := slices.Index(d.units, a.Unit), slices.Index(d.units, b.Unit)
	na, nb := d.drainedSet(au, a, ps.sp, b.set), d.drainedSet(bu, b, ps.sp, a.set)
	*spent += 2 * int64(d.n())
	var out [][]Candidate
	for _, target := range leaveOneOut(n, complement(n, unionSets(n, []bitset{na, nb}))) {
		if *spent > budget {
			break
		}
		// either sought again first: seed 89 of the calls' ground truth
		// (7/1s burst 7, 45/15s burst 81, 97/1m burst 187) fit nowhere
		// with the first picked sought again last, and is recovered with
		// it sought again first
		trs := append(ps.thirdFor(au, bu, na, nb, target, rd, spent), ps.thirdFor(bu, au, nb, na, target, rd, spent)...)
		for _, tr := range trs {
			if s := tr.split(n); s != nil {
				out = append(out, s)
			}
		}
	}
	return out
}

// leftFew bounds the refusals left to a third bucket that
// thirdNearSpread seeks it for less each one, a search each.
const leftFew = 16

// leaveOneOut is target, and where it holds leftFew refusals at most,
// target less each one.
func leaveOneOut(n int, target bitset) []bitset {
	out := []bitset{target}
	if target.count() > leftFew {
		return out
	}
	for i := range n {
		if target.has(i) {
			t := slices.Clone(target)
			t[i/64] &^= 1 << (i % 64)
			out = append(out, t)
		}
	}
	return out
}

// thirdFor seeks, beside what a and b (of units au and bu) are taken to
// explain (na, nb), a third bucket of each unit for the refusals of
// target, at the corners of its region (see nearCorners); beside each
// third, b's unit's bucket is sought again, then a's beside the two (see
// besideThird). It returns each three so found, and adds the passes it
// walked to spent.
func (ps *spreadPasses) thirdFor(au, bu int, na, nb, target bitset, rd Reading, spent *int64) []triple {
	d := ps.d
	var out []triple
	for u := -1; u < len(d.units) && target.count() > 0; u++ {
		ps.eachCorner(u, target, rd, spent, func(third Candidate) bool {
			if b, a, ok := ps.besideThird(au, bu, na, target, rd, spent); ok {
				out = append(out, triple{t: third, b: b, a: a, na: na, nb: nb, target: target})
			}
			return false
		})
	}
	return out
}

// besideThird is thirdFor's search beside a third bucket found for the
// refusals of target: unit bu's bucket that explains every refusal
// neither na nor target holds, then unit au's beside that and target;
// false where either is not found. It adds the passes it walked to spent.
func (ps *spreadPasses) besideThird(au, bu int, na, target bitset, rd Reading, spent *int64) (Candidate, Candidate, bool) {
	d := ps.d
	n := len(d.refIdx)
	nb, ok := spreadPoint(d, bu, ps.sp, rd, complement(n, unionSets(n, []bitset{na, target})), spent)
	if !ok {
		return Candidate{}, Candidate{}, false
	}
	a, ok := spreadPoint(d, au, ps.sp, rd, complement(n, unionSets(n, []bitset{nb.set, target})), spent)
	return nb, a, ok
}

// triple is three buckets thirdFor found: the third t, sought for the
// refusals of target, b sought again beside it and a beside both, and
// what the two sampled ones were taken to explain (na, nb).
type triple struct {
	t, b, a Candidate
	na, nb  bitset
	target  bitset
}

// split gives the three buckets sets on which the cover search takes all
// three, and on which each, beside the other two, is bounded by its
// region for what it was sought for: t's set is its target; a's what the
// sampled a was taken to explain, na; b's its own and what the sampled b
// was taken to explain, less t's. Beside a and b, t is left its target
// (less refusals b explains too); beside t and a, b what neither na nor
// the target holds; beside t and b, a what neither b nor the target
// holds. Drawn with every refusal taking from each, any two claim the
// whole log, and the cover search then takes two whose regions prove
// empty until its refits run out. Nil where two still cover the log.
func (tr triple) split(n int) []Candidate {
	t, b, a := tr.t, tr.b, tr.a
	t.set = slices.Clone(tr.target)
	b.set = complement(n, unionSets(n, []bitset{complement(n, unionSets(n, []bitset{tr.b.set, tr.nb})), tr.target}))
	a.set = slices.Clone(tr.na)
	three := []*Candidate{&t, &b, &a}
	for i, c := range three {
		c.Explains = c.set.count()
		if c.Explains == 0 || unionSets(n, []bitset{three[(i+1)%3].set, three[(i+2)%3].set}).count() == n {
			return nil
		}
	}
	return []Candidate{t, b, a}
}

// drainedSet is what bucket c of unit u possibly explains within spread
// sp under "refused calls count", the refusals of drain taking from it.
func (d *sends) drainedSet(u int, c Candidate, sp int64, drain bitset) bitset {
	wide := make([]int64, len(d.refIdx))
	d.spreadWide(u, uint64(c.PerDay), sp, drain, wide)
	return spreadCandidate(d, u, uint64(c.PerDay), int64(c.AtLeast), 0, RefusedCount, wide, true).set
}

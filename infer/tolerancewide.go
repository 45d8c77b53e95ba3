package infer

import (
	"slices"
	"sync"

	"github.com/rlcheck/rlcheck/rule"
)

// spreadWideBoth is spreadWide under both drains a spread's sampled
// buckets are judged with, in one walk over the calls: free as with no
// refusal taking from the bucket (drain nil), count as with every one
// taking (drain all refusals). Each refusal's bounds are those spreadWide
// gives, value for value.
func (d *sends) spreadWideBoth(u int, q uint64, sp int64, free, count []int64) {
	var possF, possA u128    // the deficit of the accepted calls, and of all calls, on the logged instants
	pi, pprev := 0, int64(0) // the calls taken into poss, and its instant
	lo, hi := 0, 0           // the calls logged in [s_r-sp, s_r+sp]
	var inF, inA int64       // their cost: the accepted ones', and all of theirs
	for r, k := range d.refIdx {
		i, t := int(k), d.at[k]
		for ; pi < len(d.at) && d.at[pi] < t-sp; pi++ {
			if pi > 0 && d.at[pi] > pprev {
				fill := mul64(q, uint64(d.at[pi]-pprev))
				possF, possA = drained(possF, fill), drained(possA, fill)
			}
			pprev = d.at[pi]
			c := mul64(uint64(d.costOf(u, pi)), day)
			if possA = possA.add(c); !d.refused[pi] {
				possF = possF.add(c)
			}
		}
		for ; hi < len(d.at) && d.at[hi] <= t+sp; hi++ {
			c := d.costOf(u, hi)
			if inA += c; !d.refused[hi] {
				inF += c
			}
		}
		for ; lo < hi && d.at[lo] < t-sp; lo++ {
			c := d.costOf(u, lo)
			if inA -= c; !d.refused[lo] {
				inF -= c
			}
		}
		foundF, foundA := possF, possA
		if pi > 0 {
			fill := mul64(q, uint64(t-sp-pprev))
			foundF, foundA = drained(possF, fill), drained(possA, fill)
		}
		// A refusal takes under count (its own cost is in inA), not under free.
		c := d.costOf(u, i)
		free[r] = foundF.add(mul64(uint64(inF+c), day)).ceilDay() - 1
		count[r] = foundA.add(mul64(uint64(inA), day)).ceilDay() - 1
	}
}

// drained is refill's deficit def less fill, never below full.
func drained(def, fill u128) u128 {
	if def.less(fill) {
		return u128{}
	}
	return def.sub(fill)
}

// spreadWides holds bounds a spread's bucket candidates no longer need:
// a spread's search makes about a hundred candidates a unit, each of a
// bound per refusal, and keeps only those not outdone.
var spreadWides sync.Pool // of *[]int64

// lendWide is room for n bounds, every one to be written.
func lendWide(n int) []int64 {
	if b, ok := spreadWides.Get().(*[]int64); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]int64, n)
}

// giveWide hands back bounds no one reads any more.
func giveWide(b []int64) { spreadWides.Put(&b) }

// pairSpread adds to the spread's buckets under reading rd, beside each
// bucket the greedy picks among them (those that explain the most of
// what the others leave), the bucket of each unit that explains every
// refusal it leaves within the spread, where the spread's region has
// one: the sampled bursts can miss the second of two buckets. Under
// "refused calls count" each pick, and each bucket so found, is paired
// again on what it explains with no refusal taking from it (see
// pairFree). It pairs once a reading, within a budget of passes as the
// exact search's, and reports whether it added a bucket.
func (ps *spreadPasses) pairSpread(rd Reading) bool {
	if ps.paired[rd] {
		return false
	}
	ps.paired[rd] = true
	return ps.pairPicks(rd, 0)
}

// pairPicks is pairSpread's pairing of the greedy picks under reading
// rd, spent passes having been walked before it; it reports whether it
// added a bucket.
func (ps *spreadPasses) pairPicks(rd Reading, spent int64) bool {
	d := ps.d
	n := len(d.refIdx)
	budget := pairBudget(d)
	before := len(ps.buckets[rd])
	picks := allPicks(n, ps.buckets[rd])
	for _, p := range picks {
		target := complement(n, p.set)
		found := false
		for u := -1; u < len(d.units) && target.count() > 0 && spent <= budget; u++ {
			if c, ok := spreadPoint(d, u, ps.sp, rd, target, &spent); ok {
				ps.buckets[rd] = append(ps.buckets[rd], c)
				found = true
			}
		}
		if !found && target.count() > 0 && spent <= budget && p.Kind == rule.Bucket {
			ps.buckets[rd] = append(ps.buckets[rd], ps.pairNearSpread(p, rd, &spent)...)
		}
	}
	if rd == RefusedCount {
		found := ps.buckets[rd][before:]
		for _, p := range append(picks, found...) {
			if spent > budget {
				break
			}
			ps.buckets[rd] = append(ps.buckets[rd], ps.pairFree(p, &spent)...)
		}
	}
	return len(ps.buckets[rd]) > before
}

// pairFree pairs bucket p under "refused calls count" on what it
// explains with no refusal taking from it: that bucket, its set so
// bounded, and beside it the bucket of each unit that explains every
// refusal it leaves. Its set drawn with every refusal taking can hold
// refusals only the other bucket's refusals, taking from it, explain,
// and a cover on it then leaves the other bucket nothing to explain;
// a set drawn with none taking holds only refusals it explains whatever
// the others take. It adds the passes it walked to spent.
func (ps *spreadPasses) pairFree(p Candidate, spent *int64) []Candidate {
	d := ps.d
	if p.Kind != rule.Bucket || p.Reading != RefusedCount {
		return nil
	}
	c := d.freeCandidate(slices.Index(d.units, p.Unit), uint64(p.PerDay), int64(p.AtLeast), ps.sp, p.Steps)
	*spent += 2 * int64(d.n())
	target := complement(len(d.refIdx), c.set)
	if target.count() == 0 || c.set.count() == 0 {
		return nil
	}
	// the partner in the bucket's own unit first, in another only where
	// none in its own is found
	u := slices.Index(d.units, p.Unit)
	out := []Candidate{c}
	for _, v := range append([]int{u}, otherUnits(u, len(d.units))...) {
		if len(out) > 1 {
			break
		}
		if b, ok := spreadPoint(d, v, ps.sp, RefusedCount, target, spent); ok {
			out = append(out, b)
		}
	}
	if len(out) == 1 {
		return nil
	}
	return out
}

// spreadPoint is a bucket of unit u that explains every refusal of
// target within spread sp under reading rd (the others that may taking
// from it), as a candidate: at the least rate of the spread's region and
// the least burst the accepted calls need there, where that burst leaves
// no room for any target. It adds the passes it walked to spent.
func spreadPoint(d *sends, u int, sp int64, rd Reading, target bitset, spent *int64) (Candidate, bool) {
	g := newSpreadFit(d, u, sp, rd, target)
	defer func() { *spent += g.steps }()
	rg := g.region()
	if rg.Empty {
		return Candidate{}, false
	}
	return g.pointAt(uint64(rg.RateMin), rd)
}

// pointAt is g's bucket at q units a day and the least burst the
// accepted calls need there, as a candidate under rd, where that burst
// leaves no room for any target.
func (g *spreadFit) pointAt(q uint64, rd Reading) (Candidate, bool) {
	d := g.d
	lower, upper := g.curve(q)
	if lower > upper {
		return Candidate{}, false
	}
	// its bounds as the sampled candidates' of rd: every refusal taking
	// under RefusedCount, none under RefusedFree
	var drain bitset
	if rd == RefusedCount {
		drain = complement(len(d.refIdx), newBitset(len(d.refIdx)))
	}
	wide := make([]int64, len(d.refIdx))
	d.spreadWide(g.u, q, g.sp, drain, wide)
	return spreadCandidate(d, g.u, q, lower, g.steps, rd, wide, true), true
}

// freeCandidate is the bucket of unit u at q units a day and burst b as
// a candidate under "refused calls count" whose set is what it possibly
// explains within spread sp with no refusal taking from it.
func (d *sends) freeCandidate(u int, q uint64, b, sp, steps int64) Candidate {
	wide := make([]int64, len(d.refIdx))
	d.spreadWide(u, q, sp, nil, wide)
	return spreadCandidate(d, u, q, b, steps, RefusedCount, wide, true)
}

// otherUnits are the units from -1 (calls) below n but u.
func otherUnits(u, n int) []int {
	var out []int
	for v := -1; v < n; v++ {
		if v != u {
			out = append(out, v)
		}
	}
	return out
}

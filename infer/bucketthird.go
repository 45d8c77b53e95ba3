package infer

import "slices"

// thirdBuckets adds, under each reading where the candidates found so far
// leave more than two rules to cover the refusals, beside each two
// buckets the sampled search picks, the bucket of each unit that explains
// every refusal both leave, where the exact region finds one: a third
// bucket explains few refusals of its own, which the sampled search, led
// by what a bucket explains, rarely samples near. Where none does, the
// two are taken near their points (see thirdNear). It spends at most
// about budget steps.
func (res *Result) thirdBuckets(d *sends, budget int64) {
	n := len(d.refIdx)
	picks := allPicks(n, res.Buckets)
	var spent int64
	need := [2]bool{res.needsThird(d, RefusedCount), res.needsThird(d, RefusedFree)}
	for i, a := range picks {
		for _, b := range picks[i+1:] {
			rd := a.Reading
			if b.Reading != rd || spent > budget || !need[rd] {
				continue
			}
			target := complement(n, unionSets(n, []bitset{a.set, b.set}))
			found := false
			for u := -1; u < len(d.units) && target.count() > 0 && spent <= budget; u++ {
				g := newRegionFit(d, u, rd, target)
				if q, c, ok := g.point(); ok {
					res.Buckets = append(res.Buckets, d.bucketPoint(u, q, c, rd))
					found = true
				}
				spent += g.steps
			}
			if !found && target.count() > 0 && spent <= budget {
				spent += res.thirdNear(d, a, b)
			}
			need[rd] = res.needsThird(d, rd)
		}
	}
	res.BucketSteps += spent
}

// thirdNear is thirdBuckets' second try beside a and b, as pairNear is
// pairWith's: what each explains at rates just above its own (nearSet) is
// taken as explained, and beside each third bucket found, b is sought
// again beside a and the third, then a beside the two found; the three
// are added where all are found. It returns its steps.
func (res *Result) thirdNear(d *sends, a, b Candidate) (steps int64) {
	n, rd := len(d.refIdx), a.Reading
	na, sa := d.nearSet(a)
	nb, sb := d.nearSet(b)
	steps = sa + sb
	target := complement(n, unionSets(n, []bitset{na, nb}))
	au, bu := slices.Index(d.units, a.Unit), slices.Index(d.units, b.Unit)
	for u := -1; u < len(d.units) && target.count() > 0; u++ {
		g := newRegionFit(d, u, rd, target)
		q, c, ok := g.point()
		steps += g.steps
		if !ok {
			continue
		}
		third := d.explainedAt(u, q, int64(c), rd)
		qb, cb, ok, s := d.besideSets(bu, rd, na, third)
		steps += s
		if !ok {
			continue
		}
		qa, ca, ok, s := d.besideSets(au, rd, d.explainedAt(bu, qb, int64(cb), rd), third)
		steps += s
		if ok {
			res.Buckets = append(res.Buckets, d.bucketPoint(u, q, c, rd), d.bucketPoint(bu, qb, cb, rd), d.bucketPoint(au, qa, ca, rd))
		}
	}
	return steps
}

// besideSets is a bucket of unit u under rd that explains every refusal
// neither set does, where the exact region finds one, and the steps
// taken.
func (d *sends) besideSets(u int, rd Reading, x, y bitset) (uint64, int, bool, int64) {
	n := len(d.refIdx)
	g := newRegionFit(d, u, rd, complement(n, unionSets(n, []bitset{x, y})))
	q, b, ok := g.point()
	return q, b, ok, g.steps + int64(d.n())
}

// needsThird reports whether no two candidates of reading rd explain
// every refusal together.
func (res *Result) needsThird(d *sends, rd Reading) bool {
	n := len(d.refIdx)
	var cs []*Candidate
	for _, all := range [][]Candidate{res.Candidates, res.Buckets} {
		for i := range all {
			if all[i].Reading == rd && all[i].Explains > 0 {
				cs = append(cs, &all[i])
			}
		}
	}
	cs = distinct(cs)
	words := (n + 63) / 64
	idx := []int{0, 0}
	for i := range cs {
		for j := i; j < len(cs); j++ {
			idx[0], idx[1] = i, j
			if coversAll(n, words, cs, idx) {
				return false
			}
		}
	}
	return true
}

package infer

import (
	"slices"

	"github.com/rlcheck/rlcheck/rule"
)

// seedBucket is a bucket of an exact fit, to try within a spread: its
// unit (-1: calls), its rate in units a day, and under "refused calls
// count" the refusals the fit's other rules explain, which may take from
// it (nil under "refused calls do not count").
type seedBucket struct {
	u     int
	q     uint64
	drain bitset
}

// exactSeeds are the buckets of each reading's exact fit. A contract that
// fits a log exactly fits within every spread (each call arriving at its
// logged instant), but the buckets sampled within a spread can miss it:
// its own buckets, each beside the others' refusals, give the cover back.
func exactSeeds(d *sends, res *Result) (seeds [2][]seedBucket) {
	n := len(d.refIdx)
	for rd, f := range res.Fits {
		if !f.Fits || !slices.ContainsFunc(f.Rules, func(r Rule) bool { return r.Kind == rule.Bucket }) {
			continue
		}
		sets := make([]bitset, len(f.Rules))
		for k, r := range f.Rules {
			sets[k] = d.exactSet(res, r, f.Reading)
		}
		for k, r := range f.Rules {
			if r.Kind != rule.Bucket {
				continue
			}
			s := seedBucket{u: slices.Index(d.units, r.Unit), q: uint64(r.perDay)}
			if f.Reading == RefusedCount {
				s.drain = unionSets(n, slices.Concat(sets[:k], sets[k+1:]))
			}
			seeds[rd] = append(seeds[rd], s)
		}
	}
	return seeds
}

// exactSet are the refusals rule r of an exact fit under reading rd
// explains on the logged instants: a bucket's at its rate and burst, a
// window's at its least N (its candidate's set).
func (d *sends) exactSet(res *Result, r Rule, rd Reading) bitset {
	if r.Kind == rule.Bucket {
		return d.explainedAt(slices.Index(d.units, r.Unit), uint64(r.perDay), int64(r.Burst), rd)
	}
	for i := range res.Candidates {
		c := &res.Candidates[i]
		if c.Kind == r.Kind && c.Window == r.Window && c.Unit == r.Unit && c.Reading == rd {
			return c.set
		}
	}
	return newBitset(len(d.refIdx))
}

// seedBuckets makes the spread's seeded buckets: each bucket of seeds[rd]
// at its rate and its least burst within the spread, as a candidate under
// rd whose refusals are those it possibly explains there, its drains
// taking from it, less the drains themselves: the exact fit gives those
// to its other rules, and a bucket that claimed them could cover the log
// alone in the cover search, which its region then refutes.
func (ps *spreadPasses) seedBuckets(seeds [2][]seedBucket) {
	d := ps.d
	for rd, ss := range seeds {
		for _, s := range ss {
			wide := make([]int64, len(d.refIdx))
			d.spreadWide(s.u, s.q, ps.sp, s.drain, wide)
			least := d.spreadLeast(s.u, s.q, ps.sp)
			c := spreadCandidate(d, s.u, s.q, least, 3*int64(d.n()), Reading(rd), wide, true)
			for i, w := range s.drain {
				c.set[i] &^= w
			}
			c.Explains = c.set.count()
			ps.seeded[rd] = append(ps.seeded[rd], c)
		}
	}
}

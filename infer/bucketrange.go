package infer

import (
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// refineBuckets bounds each bucket rule of f by its region (region.go):
// the rates and bursts at which it keeps every accepted call and explains
// the refusals no other rule of f explains, the windows at their least N
// (where they explain the most) and the other buckets at the rate and
// burst reported. The first round takes the other buckets at their
// candidates' points, each bucket after the first taking those before it
// where this round named them; each round after takes every other bucket
// where it was last named, until no bucket moves: a bucket's region is
// then the one beside the others as reported. Taking each bucket where it
// was last named, not where the round before left it, keeps two buckets
// that may explain the same refusals from both moving onto them in one
// round and both off them in the next. Where the rounds run out with a
// bucket still moving, each bucket bounded beside a point of another that
// moved since is bounded again beside it, its ranges widened to hold that
// region and its point kept. It names the rate on the grid and gives the
// least burst there. It returns the steps it took.
func refineBuckets(d *sends, f *Fit, cands []*Candidate, windows []time.Duration) int64 {
	n := len(d.refIdx)
	chosen := make([]*Candidate, len(f.Rules)) // before any rate is renamed
	sets := make([]bitset, len(f.Rules))       // what each rule explains
	for k, r := range f.Rules {
		chosen[k] = find(cands, r)
		sets[k] = chosen[k].set
	}
	var steps int64
	targets := make([]bitset, len(f.Rules))
	for round := range maxRefines {
		moved := false
		next := slices.Clone(sets)
		for k := range f.Rules {
			r := &f.Rules[k]
			if r.Kind != rule.Bucket {
				continue
			}
			target := complement(n, unionSets(n, slices.Concat(next[:k], next[k+1:])))
			if round > 0 && slices.Equal(target, targets[k]) {
				continue
			}
			targets[k] = target
			was := [2]int64{r.perDay, int64(r.Burst)}
			steps += refineBucket(d, f.Reading, r, chosen[k], target, windows, round == 0)
			if round == 0 || was != [2]int64{r.perDay, int64(r.Burst)} {
				u := slices.Index(d.units, r.Unit)
				next[k] = d.explainedAt(u, uint64(r.perDay), int64(r.Burst), f.Reading)
				steps += int64(d.n())
				moved = moved || !slices.Equal(next[k], sets[k])
			}
		}
		sets = next
		if !moved {
			return steps
		}
	}
	// Past the rounds, a bucket bounded beside others that moved since
	// is bounded again beside them as reported, its point kept.
	for k, r := range f.Rules {
		if r.Kind != rule.Bucket {
			continue
		}
		target := complement(n, unionSets(n, slices.Concat(sets[:k], sets[k+1:])))
		if !slices.Equal(target, targets[k]) {
			steps += reboundBucket(d, f.Reading, &f.Rules[k], target)
		}
	}
	return steps
}

// reboundBucket widens bucket rule r's ranges to its region of the
// targets (narrowed as refineBucket does), its named point kept, and
// returns the steps it took.
func reboundBucket(d *sends, rd Reading, r *Rule, target bitset) int64 {
	g := newRegionFit(d, slices.Index(d.units, r.Unit), rd, target)
	rg := g.narrow(g.region(), max(2*maxRegionSteps, 40*int64(d.n())))
	if rg.Empty {
		return g.steps // no bucket fits beside the others: none to hold
	}
	r.RateMin, r.RateMax = min(r.RateMin, rg.RateMin), max(r.RateMax, rg.RateMax)
	r.Min = min(r.Min, rg.BurstMin)
	if rg.BurstMax == math.MaxInt || r.Max == 0 {
		r.Max = 0
	} else {
		r.Max = max(r.Max, rg.BurstMax)
	}
	r.RateOpen, r.Outer = r.RateOpen || rg.RateOpen, r.Outer || !rg.Exact
	r.Confidence = min(r.Confidence, bucketConfidence(rg))
	return g.steps
}

// unionSets is the union of sets of n refusals.
func unionSets(n int, sets []bitset) bitset {
	u := newBitset(n)
	for _, s := range sets {
		for i, w := range s {
			u[i] |= w
		}
	}
	return u
}

// maxRefines bounds refineBuckets' rounds.
const maxRefines = 4

// refineBucket bounds bucket rule r (candidate c) by its region of the
// targets and returns the steps it took. Where the region is empty, the
// first round keeps the candidate's own point (which verify judges) and
// a later one leaves the rule as it was.
func refineBucket(d *sends, rd Reading, r *Rule, c *Candidate, target bitset, windows []time.Duration, first bool) int64 {
	g := newRegionFit(d, slices.Index(d.units, r.Unit), rd, target)
	rg := g.narrow(g.region(), max(2*maxRegionSteps, 40*int64(d.n())))
	if rg.Empty && !first {
		return g.steps
	}
	if rg.Empty {
		// Not one bucket here explains what the others leave: keep
		// the candidate's own point, which verify judges.
		rg = region{RateMin: c.PerDay, RateMax: c.PerDay, BurstMin: c.AtLeast, BurstMax: c.AtLeast}
	}
	q := r.setExtent(rg, c.PerDay, windows)
	lower, upper := g.curve(q)
	r.Burst = clampInt(max(lower, int64(r.Min)))
	if int64(r.Burst) > upper || !g.fits(q, int64(r.Burst)) {
		// A hole of the region, or an outer bound: a corner of the
		// extent that fits, else the candidate's own point.
		q, r.Burst = cornerOr(g, rg, uint64(c.PerDay), c.AtLeast)
		r.Window, r.Rate = 24*time.Hour, clampInt(int64(q))
	}
	r.perDay = int64(q)
	return g.steps
}

// cornerOr is a corner of extent rg that fits g, judged exactly (the
// least rate at the most burst, then the most rate at the least), else
// the point (q, b).
func cornerOr(g *regionFit, rg region, q uint64, b int) (uint64, int) {
	for _, c := range [][2]int64{{rg.RateMin, int64(rg.BurstMax)}, {rg.RateMax, int64(rg.BurstMin)}} {
		if !rg.Empty && c[0] > 0 && c[1] < math.MaxInt && g.fits(uint64(c[0]), c[1]) {
			return uint64(c[0]), int(c[1])
		}
	}
	return q, b
}

// setExtent sets a bucket rule's ranges to region rg's extent and names
// its rate on the grid (see nameRate; near perDay), and returns that rate
// in units a day.
func (r *Rule) setExtent(rg region, perDay int64, windows []time.Duration) uint64 {
	r.RateMin, r.RateMax, r.Min, r.Max = rg.RateMin, rg.RateMax, rg.BurstMin, rg.BurstMax
	if rg.BurstMax == math.MaxInt {
		r.Max = 0 // no upper bound, as for a window
	}
	r.RateOpen, r.Outer = rg.RateOpen, !rg.Exact
	r.Confidence = bucketConfidence(rg)
	r.Window, r.Rate = nameRate(r.RateMin, r.RateMax, perDay, windows)
	return uint64(r.Rate) * (day / uint64(r.Window))
}

// bucketConfidence is the share of the region's extent the traffic
// probed: the least of the burst's and the rate's Min/Max, 0 when the
// rate has no upper bound.
func bucketConfidence(rg region) float64 {
	if rg.RateOpen || rg.RateMax == 0 || rg.BurstMax == 0 || rg.BurstMax == math.MaxInt {
		return 0
	}
	return min(float64(rg.BurstMin)/float64(rg.BurstMax), float64(rg.RateMin)/float64(rg.RateMax))
}

// nameRate names a rate of lo to hi units a day (near q) as R per the
// shortest grid window that makes R whole, else as q per day.
func nameRate(lo, hi, q int64, windows []time.Duration) (time.Duration, int) {
	for _, w := range windows {
		if w <= 0 || uint64(w) > day || day%uint64(w) != 0 {
			continue
		}
		k := int64(day / uint64(w))
		from, to := (lo+k-1)/k, hi/k
		if from < 1 || from > to {
			continue
		}
		return w, int(min(max(q/k, from), to))
	}
	return 24 * time.Hour, int(q)
}

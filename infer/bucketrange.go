package infer

import (
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// refineBuckets bounds each bucket rule of f by its region (region.go):
// the rates and bursts at which it keeps every accepted call and explains
// the refusals no other rule of f explains, the others at their least N
// (where they explain the most). It names the rate on the grid and gives
// the least burst there. It returns the steps it took.
func refineBuckets(d *sends, f *Fit, cands []*Candidate, windows []time.Duration) int64 {
	var steps int64
	eachBucket(d, f, cands, func(r *Rule, c *Candidate, target bitset) {
		g := newRegionFit(d, slices.Index(d.units, r.Unit), f.Reading, target)
		rg := g.region()
		if rg.Empty {
			// Not one bucket here explains what the others leave: keep
			// the candidate's own point, which verify judges.
			rg = region{RateMin: c.PerDay, RateMax: c.PerDay, BurstMin: c.AtLeast, BurstMax: c.AtLeast}
		}
		q := r.setExtent(rg, c.PerDay, windows)
		lower, upper := g.curve(q)
		r.Burst = clampInt(max(lower, int64(r.Min)))
		if int64(r.Burst) > upper || !g.fits(q, int64(r.Burst)) {
			// A hole of the region, or an outer bound: the candidate's
			// own point fits.
			r.Window, r.Rate, r.Burst, q = 24*time.Hour, clampInt(c.PerDay), c.AtLeast, uint64(c.PerDay)
		}
		r.perDay = int64(q)
		steps += g.steps
	})
	return steps
}

// eachBucket visits each bucket rule of f with its candidate and its
// targets: the refusals no other rule of f explains (the others at their
// least N, where they explain the most).
func eachBucket(d *sends, f *Fit, cands []*Candidate, visit func(r *Rule, c *Candidate, target bitset)) {
	n := len(d.refIdx)
	chosen := make([]*Candidate, len(f.Rules)) // before any rate is renamed
	for k, r := range f.Rules {
		chosen[k] = find(cands, r)
	}
	for k := range f.Rules {
		if f.Rules[k].Kind != rule.Bucket {
			continue
		}
		rest := union(n, slices.Delete(slices.Clone(chosen), k, k+1))
		visit(&f.Rules[k], chosen[k], complement(n, rest))
	}
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

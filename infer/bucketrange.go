package infer

import (
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// rateStep is the relative step of the scan for the edges of a bucket's
// rates, and maxRateSteps bounds it on each side.
const (
	rateStep     = 1.005
	maxRateSteps = 200
)

// bucketFit judges buckets of one unit at any rate against the refusals a
// bucket rule of a fit alone explains.
type bucketFit struct {
	d      *sends
	u      int
	rd     Reading
	target []int // refusals by rank
	steps  int64
}

// at reports, for q units a day, the least burst that keeps the accepted
// calls and the most that explains every target refusal.
func (b *bucketFit) at(q uint64) (least, most int) {
	p := b.d.bucketAt(b.u, q, true, 0)
	b.steps += p.steps
	most = math.MaxInt
	for _, r := range b.target {
		most = min(most, p.bound(b.rd, r))
	}
	return p.lower[b.rd], most
}

func (b *bucketFit) ok(q uint64) bool {
	least, most := b.at(q)
	return least <= most
}

// edge walks from the consistent rate q by factor (above or below 1)
// until the bucket no longer fits, and returns the last rate that fits.
func (b *bucketFit) edge(q uint64, factor float64) uint64 {
	good := q
	for range maxRateSteps {
		next := uint64(float64(good) * factor)
		if next == good {
			next = good + 1
			if factor < 1 {
				next = good - 1
			}
		}
		if next < 1 || next > math.MaxInt64/4 {
			return good
		}
		if !b.ok(next) {
			return b.bisect(good, next)
		}
		good = next
	}
	return good
}

// bisect narrows the edge between a rate that fits and one that does not
// to one unit a day: traffic at the limit can pin a rate that finely.
func (b *bucketFit) bisect(good, bad uint64) uint64 {
	for {
		lo, hi := min(good, bad), max(good, bad)
		if hi-lo <= 1 {
			return good
		}
		mid := lo + (hi-lo)/2
		if b.ok(mid) {
			good = mid
		} else {
			bad = mid
		}
	}
}

// refineBuckets bounds each bucket rule of f: the rates at which some
// burst keeps every accepted call and explains the refusals only it
// explains, the bursts over those rates, and a name on the grid. It
// returns the steps it took.
func refineBuckets(d *sends, f *Fit, cands []*Candidate, windows []time.Duration) int64 {
	var steps int64
	n := len(d.refIdx)
	for k := range f.Rules {
		r := &f.Rules[k]
		if r.Kind != rule.Bucket {
			continue
		}
		var others []*Candidate
		for j, o := range f.Rules {
			if j != k {
				others = append(others, find(cands, o))
			}
		}
		c, rest := find(cands, *r), union(n, others)
		b := &bucketFit{d: d, u: slices.Index(d.units, r.Unit), rd: f.Reading}
		for i := range n {
			if c.set.has(i) && !rest.has(i) {
				b.target = append(b.target, i)
			}
		}
		q := uint64(c.PerDay)
		r.RateMin, r.RateMax = c.PerDay, c.PerDay
		if len(b.target) > 0 {
			r.RateMax, r.RateMin = int64(b.edge(q, rateStep)), int64(b.edge(q, 1/rateStep))
			r.Min, _ = b.at(uint64(r.RateMax))
			_, r.Max = b.at(uint64(r.RateMin))
			r.Confidence = float64(r.Min) / float64(r.Max)
		}
		r.Window, r.Rate = nameRate(r.RateMin, r.RateMax, c.PerDay, windows)
		r.Burst, _ = b.at(uint64(r.Rate) * (day / uint64(r.Window)))
		steps += b.steps
	}
	return steps
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

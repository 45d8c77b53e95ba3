package infer

import (
	"math"
	"slices"
)

// narrow narrows an extent rg bounded from outside (refusals outside the
// targets that may drain the bucket or not) burst by burst. For each
// burst b of the extent, the slab of rates [RateMin, RateMax] at b is
// sorted as the whole extent is (see sort): a refusal with room even
// with the most deficit at the slab's least rate drains at every point
// of the slab that fits, one with no room even with the least deficit at
// its most rate at none. The rates that fit at b lie from loAt(b) (the
// certain drains) to the most rate whose upper curve (the possible
// drains) reaches b: the slab is clipped to them and sorted again, until
// the sorting stops or the slab is empty. The union of the slabs left
// holds every point that fits: each step keeps, at every point that
// fits, the true drains between the certain and the possible. Where the
// budget of steps would not cover every slab, rg is kept.
func (g *regionFit) narrow(rg region, budget int64) region {
	bursts := int64(rg.BurstMax) - int64(rg.BurstMin) + 1
	if !g.drain || rg.Empty || rg.Exact || rg.RateOpen || rg.BurstMax == math.MaxInt || bursts > maxSlabs ||
		bursts*slabSteps*int64(g.d.n()) > budget {
		return rg
	}
	certain, possible := g.certain, g.possible
	defer func() { g.certain, g.possible = certain, possible }()
	out := region{Empty: true}
	start := g.steps
	for b := int64(rg.BurstMin); b <= int64(rg.BurstMax); b++ {
		if g.steps-start > budget {
			return rg
		}
		g.certain, g.possible = slices.Clone(certain), slices.Clone(possible)
		lo, hi, ok := g.slab(b, uint64(rg.RateMin), uint64(rg.RateMax))
		if !ok {
			continue
		}
		if out.Empty {
			out = region{RateMin: int64(lo), RateMax: int64(hi), BurstMin: int(b), BurstMax: int(b)}
			continue
		}
		out.RateMin, out.RateMax, out.BurstMax = min(out.RateMin, int64(lo)), max(out.RateMax, int64(hi)), int(b)
	}
	if out.Empty {
		// No slab holds a point that fits: keep the outer bound, whose
		// point the caller judges exactly.
		return rg
	}
	return out
}

// maxSlabs bounds the bursts narrow sorts one by one; slabSteps is about
// the passes one slab takes, to judge the budget before starting.
const (
	maxSlabs  = 512
	slabSteps = 160
)

// slab clips the rates [qlo, qhi] at burst b to those the curves allow,
// sorting the refusals over the slab between clips (see narrow), and
// reports whether any rate is left.
func (g *regionFit) slab(b int64, qlo, qhi uint64) (lo, hi uint64, ok bool) {
	for range maxSorts + 1 {
		l := g.loAt(b)
		if l == 0 {
			return 0, 0, false
		}
		lo = max(l, qlo)
		if _, u := g.curve(lo); u < b {
			return 0, 0, false // the upper curve falls with the rate: no rate from lo fits
		}
		hi = min(g.hiAt(b, lo), qhi)
		if lo > hi {
			return 0, 0, false
		}
		qlo, qhi = lo, hi
		if !g.sort(region{RateMin: int64(qlo), RateMax: int64(qhi), BurstMin: int(b), BurstMax: int(b)}) {
			break
		}
	}
	return qlo, qhi, true
}

package difftest

import (
	"math/rand/v2"
)

// Reserve makes the case's sends reserved ones: most are settled, at
// their own instant, at a later send's (a tie), W (or W+-1) on, or
// anywhere within 2W, to an actual cost of 0, the estimate, one less, one
// more, or anything up to twice the unit's cap; the others are never
// settled.
func Reserve(rng *rand.Rand, c *Case) {
	w := int64(c.Rules[0].Window)
	for i := range c.Sends {
		s := &c.Sends[i]
		if rng.IntN(5) == 0 {
			continue
		}
		u := s.At
		switch rng.IntN(6) {
		case 0:
		case 1, 2:
			u = c.Sends[min(len(c.Sends)-1, i+1+rng.IntN(4))].At
		case 3:
			u += w + rng.Int64N(3) - 1
		default:
			u += rng.Int64N(2*w + 1)
		}
		s.Settled, s.Actual = &u, map[string]int64{}
		for unit, e := range s.Costs {
			n := capOf(c.Rules, unit)
			s.Actual[unit] = []int64{0, e, max(e-1, 0), e + 1, rng.Int64N(2*n + 1)}[rng.IntN(5)]
		}
	}
}

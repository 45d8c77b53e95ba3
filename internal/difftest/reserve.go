package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/rlcheck/rlcheck/sendlog"
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

// ReservedCSV writes a reserved case as check reads it with
// ReservedReadOptions: ts (ns), key, each unit's estimate in a column
// named as the unit and its actual in UNIT_actual, and the settlement
// instant in settled (empty for never).
func (c Case) ReservedCSV() string {
	var b strings.Builder
	units := c.Units()
	b.WriteString("ts,key")
	for _, u := range units {
		b.WriteString("," + u + "," + u + "_actual")
	}
	b.WriteString(",settled\n")
	for _, s := range c.Sends {
		fmt.Fprintf(&b, "%d,%s", s.At, s.Key)
		for _, u := range units {
			fmt.Fprintf(&b, ",%d,", s.Costs[u])
			if s.Settled != nil {
				fmt.Fprintf(&b, "%d", s.Actual[u])
			}
		}
		b.WriteString(",")
		if s.Settled != nil {
			fmt.Fprintf(&b, "%d", *s.Settled)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ReservedReadOptions are check's options for ReservedCSV.
func (c Case) ReservedReadOptions() sendlog.Options {
	o := c.ReadOptions()
	o.SettledCol = "settled"
	for i := range o.Costs {
		o.Costs[i].ActualCol = o.Costs[i].Unit + "_actual"
	}
	return o
}

package difftest

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/rule"
)

// drawer appends sends to a case, one gap at a time.
type drawer struct {
	rng *rand.Rand
	c   *Case
	w   int64 // the first rule's window
	loc *time.Location
	at  int64
	// light draws costs of mostly 0 and 1 with a rare one over the cap.
	light bool
}

// start picks where the log begins: at 0, just after it, a little below
// 2^62 ns, or in 2026; a zoned log just before the days its zone makes odd.
func (d *drawer) start(f Family) {
	if f == Zoned {
		z := zones[d.rng.IntN(len(zones))]
		loc, err := time.LoadLocation(z.name)
		if err != nil {
			panic(err) // rule imports time/tzdata: every zone above loads
		}
		d.loc = loc
		for i := range d.c.Rules {
			d.c.Rules[i].Zone = z.name
		}
		d.at = z.near.UnixNano() - d.rng.Int64N(int64(6*time.Hour))
		if z.name == "UTC" {
			d.at = d.rng.Int64N(3)
		}
		return
	}
	d.at = []int64{0, d.rng.Int64N(5), 1<<62 - d.rng.Int64N(1<<20), 1_767_225_600_000_000_000}[d.rng.IntN(4)]
}

// next appends one send after a gap of 0 (a tie), exactly W, W-1 or W+1,
// to W (or W+-1) after the send N back, to the next window edge of a
// fixed or zoned rule, or anything shorter than W.
func (d *drawer) next() {
	span := d.w
	if d.loc != nil {
		span = int64(5 * time.Hour)
	}
	switch d.rng.IntN(10) {
	case 0, 1:
	case 2:
		d.at += d.w + d.rng.Int64N(3) - 1
	case 3, 4:
		d.at = max(d.at, d.back()+d.w+d.rng.Int64N(3)-1)
	case 5:
		d.at = max(d.at, d.edge()+d.rng.Int64N(3)-1)
	default:
		d.at += d.rng.Int64N(span/2 + 1)
	}
	d.at = min(d.at, math.MaxInt64-int64(48*time.Hour))
	s := Send{At: d.at, Costs: map[string]int64{}}
	if d.c.Keyed {
		s.Key = []string{"a", "b"}[d.rng.IntN(2)]
	}
	for _, u := range d.c.Units() {
		n := capOf(d.c.Rules, u)
		s.Costs[u] = []int64{0, 1, n, n + 1, d.rng.Int64N(n + 1), d.rng.Int64N(3)}[d.rng.IntN(6)]
		if d.light { // mostly 0 and 1, so that a lone costly send stands out
			s.Costs[u] = []int64{0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, n + 1}[d.rng.IntN(15)]
		}
	}
	d.c.Sends = append(d.c.Sends, s)
}

// back is the time of the send N sends back, N the first rule's limit.
func (d *drawer) back() int64 {
	n := d.c.Rules[0].Limit
	if len(d.c.Sends) < n {
		return d.at
	}
	return d.c.Sends[len(d.c.Sends)-n].At
}

// edge is the next window edge after the current instant: the next local
// day's first instant for a zoned log, of the first fixed rule's windows
// for a fixed one, else one window on.
func (d *drawer) edge() int64 {
	if d.loc != nil {
		t := time.Unix(0, d.at).In(d.loc)
		for k := 1; k <= 3; k++ {
			if s, ok := oracle.FirstInstant(t.Year(), t.Month(), t.Day()+k, d.loc); ok {
				return s
			}
		}
	}
	for _, r := range d.c.Rules {
		if r.Kind == rule.Fixed && r.Zone == "" {
			w, o := int64(r.Window), int64(r.Offset)
			return d.at + w - ((d.at-o)%w+w)%w
		}
	}
	return d.at + d.w
}

// capOf is the least limit (a bucket's burst) of the rules metering unit.
func capOf(rules []rule.Rule, unit string) int64 {
	n := int64(math.MaxInt64)
	for _, r := range rules {
		c := int64(r.Limit)
		if r.Kind == rule.Bucket {
			c = int64(r.Burst)
		}
		if r.Unit == unit {
			n = min(n, c)
		}
	}
	return n
}

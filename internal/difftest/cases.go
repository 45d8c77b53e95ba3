package difftest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Family is a kind of rule as the tests draw it: a fixed window aligned to
// a zone's midnight is a family of its own, for its 23, 24 and 25-hour days.
type Family int

const (
	Sliding Family = iota
	Fixed
	Zoned
	Bucket
	FirstCall
)

// Families lists every family, in the order tests run them.
var Families = []Family{Sliding, Fixed, Zoned, Bucket, FirstCall}

func (f Family) String() string {
	return [...]string{"sliding", "fixed", "zoned", "bucket", "first-call"}[f]
}

// Send is one send of a drawn log. Costs are its estimates when Settled
// is set: from that instant on its costs are Actual.
type Send struct {
	At      int64
	Key     string
	Costs   map[string]int64
	Settled *int64
	Actual  map[string]int64
}

// Case is a drawn log in time order (ties in input order) and the rules and
// boundary it is judged by.
type Case struct {
	Family   Family
	Rules    []rule.Rule
	Boundary rule.Boundary
	Keyed    bool
	Sends    []Send
}

// Units are the units the case's rules meter, in the order they name them.
func (c Case) Units() []string { return rule.Units(c.Rules) }

// String names the case for failure messages.
func (c Case) String() string {
	return fmt.Sprintf("%s %v %s keyed=%v, %d sends from %d", c.Family, c.Rules, c.Boundary, c.Keyed, len(c.Sends), c.first())
}

func (c Case) first() int64 {
	if len(c.Sends) == 0 {
		return 0
	}
	return c.Sends[0].At
}

// Options shape a drawn case.
type Options struct {
	Sends int // how many sends (default 120)
	// Keys draws sends for two keys when set.
	Keys bool
	// Tiny windows (10 to 40 ns) make every gap an edge case; otherwise
	// windows are about a second. Zoned cases always have days.
	Tiny bool
}

// Draw draws a case of family f from rng.
func Draw(rng *rand.Rand, f Family, o Options) Case {
	if o.Sends == 0 {
		o.Sends = 120
	}
	c := Case{Family: f, Keyed: o.Keys}
	if f == Sliding && rng.IntN(2) == 0 {
		c.Boundary = rule.Closed
	}
	w := int64(time.Second) + rng.Int64N(3) - 1
	if o.Tiny {
		w = 10 + rng.Int64N(31)
	}
	c.Rules = drawRules(rng, f, w)
	d := drawer{rng: rng, c: &c, w: int64(c.Rules[0].Window), light: rng.IntN(3) == 0}
	d.start(f)
	for range o.Sends {
		d.next()
	}
	return c
}

// drawRules draws a call rule and a cost rule of family f with windows
// near w, small limits so that windows fill, and a third rule at times.
func drawRules(rng *rand.Rand, f Family, w int64) []rule.Rule {
	rules := []rule.Rule{
		kindRule(rng, f, w, "", 1+rng.IntN(4)),
		kindRule(rng, f, []int64{w, 2 * w, w + 1}[rng.IntN(3)], "tokens", 3+rng.IntN(15)),
	}
	// A third rule, unless it repeats one: the commands check a rule given
	// twice once, and merge refuses a report that lists one twice.
	if third := kindRule(rng, f, 3*w, []string{"", "points"}[rng.IntN(2)], 2+rng.IntN(6)); rng.IntN(3) == 0 &&
		third.Contract() != rules[0].Contract() && third.Contract() != rules[1].Contract() {
		rules = append(rules, third)
	}
	rng.Shuffle(len(rules), func(i, j int) { rules[i], rules[j] = rules[j], rules[i] })
	return rules
}

// zones are the zones zoned cases use, each with the instant its days of
// interest start near: 23 and 25-hour days, a half-hour change, a skipped
// midnight, a date lived twice (Goose Bay, which LivesADateTwice names), a
// skipped date, and days in 2116 (2^62 ns).
var zones = []struct {
	name string
	near time.Time
}{
	{"America/New_York", time.Date(2024, 3, 9, 12, 0, 0, 0, time.UTC)},
	{"America/New_York", time.Date(2024, 11, 2, 12, 0, 0, 0, time.UTC)},
	{"America/New_York", time.Date(2116, 3, 7, 12, 0, 0, 0, time.UTC)},
	{"Australia/Lord_Howe", time.Date(2024, 4, 6, 0, 0, 0, 0, time.UTC)},
	{"America/Sao_Paulo", time.Date(2018, 11, 3, 0, 0, 0, 0, time.UTC)},
	{"America/Goose_Bay", time.Date(1990, 10, 27, 12, 0, 0, 0, time.UTC)},
	{"Pacific/Apia", time.Date(2011, 12, 28, 12, 0, 0, 0, time.UTC)},
	{"Asia/Kathmandu", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	{"UTC", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)},
}

// kindRule is one rule of family f over window w (a day for Zoned).
func kindRule(rng *rand.Rand, f Family, w int64, unit string, n int) rule.Rule {
	r := rule.Rule{Limit: n, Window: time.Duration(w), Unit: unit}
	switch f {
	case Fixed:
		r.Kind = rule.Fixed
		if rng.IntN(3) > 0 {
			r.Offset = time.Duration(rng.Int64N(w))
		}
	case Zoned:
		r.Kind, r.Window = rule.Fixed, 24*time.Hour
	case Bucket:
		r.Kind, r.Burst = rule.Bucket, 1+rng.IntN(2*n)
	case FirstCall:
		r.Kind = rule.FirstCall
	}
	return r
}

// LivesADateTwice reports whether the case's days are in a zone that
// turned its clock back across midnight, so that a date was lived again
// after the next began: sql keys days by the local date there, not by the
// first instant of each date (docs/sql.md).
func (c Case) LivesADateTwice() bool {
	return c.Family == Zoned && c.Rules[0].Zone == "America/Goose_Bay"
}

package oracle

import (
	"math/big"
	"sort"
	"sync"
	"time"
)

// judgeSliding applies the sliding definition: send i violates when the
// cost of the earlier sends in (t_i - W, t_i] (closed: [t_i - W, t_i]),
// each at the cost known at t_i, plus its own estimate exceeds N.
func judgeSliding(sends []Send, order []int, r Rule, closed bool) Verdict {
	var v Verdict
	n := big.NewInt(r.N)
	loads := big.NewInt(0)
	for p, i := range order {
		sum := cost(sends[i], r)
		for _, j := range order[:p] {
			if within(diff(sends[i].T, sends[j].T), r.W, closed) {
				sum.Add(sum, costAt(sends[j], r, sends[i].T, closed))
			}
		}
		if sum.Cmp(n) > 0 {
			v.Violations = append(v.Violations, i)
		}
		loads = maxOf(loads, sum)
	}
	v.Max = loads
	if !anySettled(sends) {
		v.Max = slidingMax(sends, r, closed)
	}
	return v
}

// anySettled reports whether some send has a settlement. A log without
// one has its fullest window taken over every window; with settlements a
// window's content changes with the instant it is judged at, and the
// fullest is the largest load a send was judged against, its own
// estimate included.
func anySettled(sends []Send) bool {
	for _, s := range sends {
		if s.Settled != nil {
			return true
		}
	}
	return false
}

// within reports whether a send gap after another shares its window.
func within(gap *big.Int, w int64, closed bool) bool {
	c := gap.Cmp(big.NewInt(w))
	return c < 0 || closed && c == 0
}

// slidingMax is the largest cost in any window [t, t+W) (closed: [t, t+W]);
// a fullest window can always be taken to start at a send.
func slidingMax(sends []Send, r Rule, closed bool) *big.Int {
	best := big.NewInt(0)
	for _, a := range sends {
		sum := new(big.Int)
		for _, b := range sends {
			gap := diff(b.T, a.T)
			if gap.Sign() >= 0 && within(gap, r.W, closed) {
				sum.Add(sum, cost(b, r))
			}
		}
		best = maxOf(best, sum)
	}
	return best
}

// judgeFixed applies the fixed definition: send i violates when the cost
// of the earlier sends in its own window, each at the cost known at t_i,
// plus its own estimate exceeds N. The fullest window is the largest load
// a send was judged against (without settlements, a window's total).
func judgeFixed(sends []Send, order []int, r Rule, closed bool) Verdict {
	v := Verdict{Max: big.NewInt(0)}
	n := big.NewInt(r.N)
	keys := make([]string, len(sends))
	for i, s := range sends {
		keys[i] = fixedKey(s.T, r).String()
	}
	for p, i := range order {
		sum := cost(sends[i], r)
		for _, j := range order[:p] {
			if keys[j] == keys[i] {
				sum.Add(sum, costAt(sends[j], r, sends[i].T, closed))
			}
		}
		if sum.Cmp(n) > 0 {
			v.Violations = append(v.Violations, i)
		}
		v.Max = maxOf(v.Max, sum)
	}
	return v
}

// fixedKey names the fixed window holding t: its index floor((t - o)/W),
// or with a zone the instant its local day starts.
func fixedKey(t int64, r Rule) *big.Int {
	if r.Zone != nil {
		return big.NewInt(DayStart(t, r.Zone))
	}
	q, m := new(big.Int), new(big.Int)
	q.DivMod(diff(t, r.Offset), big.NewInt(r.W), m) // Euclidean: floor for W > 0
	return q
}

// judgeBucket applies the bucket definition with the level an exact
// rational: full at the first send, refilled by N*(t - t_prev)/W up to
// the burst between events; a send that costs more than the level
// violates and takes nothing, any other takes its estimate. At its
// settlement a send that took its estimate E gets E - A back, never above
// the burst, or gives A - E more, which may leave the level below zero.
// Settlements due at one instant are applied in the order of their sends.
func judgeBucket(sends []Send, order []int, r Rule, closed bool) Verdict {
	var v Verdict
	b := bucket{r: r, burst: new(big.Rat).SetInt64(r.Burst)}
	b.level = new(big.Rat).Set(b.burst)
	var drained []int // sends that took their estimate, settlement pending
	for p, i := range order {
		s := sends[i]
		if p == 0 {
			b.prev = s.T
		}
		drained = b.settle(sends, drained, s.T, closed)
		b.refill(s.T)
		c := new(big.Rat).SetInt(cost(s, r))
		if c.Cmp(b.level) > 0 {
			v.Violations = append(v.Violations, i)
			v.Levels = append(v.Levels, new(big.Rat).Set(b.level))
			continue
		}
		b.level.Sub(b.level, c)
		if s.Settled != nil && r.Unit != "" {
			drained = append(drained, i)
		}
	}
	return v
}

// bucket is a bucket's level and the instant it was last brought to.
type bucket struct {
	r     Rule
	burst *big.Rat
	level *big.Rat
	prev  int64
}

// refill brings the level from prev to at, never above the burst.
func (b *bucket) refill(at int64) {
	gap := diff(at, b.prev)
	refill := new(big.Rat).SetFrac(gap.Mul(gap, big.NewInt(b.r.N)), big.NewInt(b.r.W))
	if b.level.Add(b.level, refill); b.level.Cmp(b.burst) > 0 {
		b.level.Set(b.burst)
	}
	b.prev = at
}

// settle applies, in time order (ties in send order), the settlements of
// the drained sends known at instant at, and returns those still pending.
func (b *bucket) settle(sends []Send, drained []int, at int64, closed bool) []int {
	var due, rest []int
	for _, j := range drained {
		if settledBy(sends[j], at, closed) {
			due = append(due, j)
		} else {
			rest = append(rest, j)
		}
	}
	sort.SliceStable(due, func(x, y int) bool { return *sends[due[x]].Settled < *sends[due[y]].Settled })
	for _, j := range due {
		b.refill(*sends[j].Settled)
		back := diff(cost(sends[j], b.r).Int64(), sends[j].Actual[b.r.Unit])
		if b.level.Add(b.level, new(big.Rat).SetInt(back)); b.level.Cmp(b.burst) > 0 {
			b.level.Set(b.burst)
		}
	}
	return rest
}

// judgeFirstCall applies the first-call definition: a window [s, s+W)
// opens at a send s arriving with none open; a send violates when the
// window's cost before it (each send at the cost known at its instant)
// plus its own estimate exceeds N, and still counts in it.
//
// Both documents leave the window's end unstated; it is read half-open, as
// every other window of the definitions is: a send exactly W after the
// opening send opens the next window. docs/semantics.md settles what
// semantics.md leaves open about a send that costs more than N on its own
// with no window open: it violates, and opens no window.
//
// Neither says what such a send adds to the fullest window, Max: it lies
// in none. It is read as a window of its own, holding its own cost: a
// report whose rule was broken always names a window over the limit (merge
// refuses one that does not as contradicting itself), and watch's summary
// of such a log says "at most 10 tokens in a window" for a lone send of 10.
func judgeFirstCall(sends []Send, order []int, r Rule, closed bool) Verdict {
	v := Verdict{Max: big.NewInt(0)}
	n := big.NewInt(r.N)
	open, start := false, int64(0)
	var in []int // the sends of the open window
	for _, i := range order {
		s, c := sends[i], cost(sends[i], r)
		if !open || !within(diff(s.T, start), r.W, false) {
			open = false
			if c.Cmp(n) > 0 {
				v.Violations = append(v.Violations, i)
				v.Max = maxOf(v.Max, c)
				continue
			}
			open, start, in = true, s.T, nil
		}
		sum := new(big.Int).Set(c)
		for _, j := range in {
			sum.Add(sum, costAt(sends[j], r, s.T, closed))
		}
		if in = append(in, i); sum.Cmp(n) > 0 {
			v.Violations = append(v.Violations, i)
		}
		v.Max = maxOf(v.Max, sum)
	}
	return v
}

// DayStart returns the start of the local-day window of loc holding t: the
// first instant of a local date, the latest such instant not after t.
//
// Usually that is the first instant of t's own date. docs/semantics.md
// says each window runs "from the first instant of that date to the first
// instant of the next"; where a zone turned its clock back across midnight
// (America/Goose_Bay, 1987-2010: 00:01 back to 23:01) the end of a date is
// lived again after the next date began, and that reading puts it in the
// next date's window, as here. semantics.md says only "aligned to midnight". Where a date is skipped (Pacific/Apia, 2011-12-30) the window
// runs to the first instant of the next date that exists.
func DayStart(t int64, loc *time.Location) int64 {
	y, m, d := time.Unix(0, t).In(loc).Date()
	start, _ := FirstInstant(y, m, d, loc)
	for k := 1; k <= 2; k++ {
		if s, ok := FirstInstant(y, m, d+k, loc); ok && s <= t {
			start = s
		}
	}
	return start
}

// FirstInstant returns the first instant (ns) whose local date in loc is
// y-m-d (normalized as time.Date does), from the zone's periods of
// constant offset around it; false when the zone skips that date.
func FirstInstant(y int, m time.Month, d int, loc *time.Location) (int64, bool) {
	midnight := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() // local midnight, as if UTC
	key := dayKey{loc, midnight}
	if f, ok := firsts.Load(key); ok {
		got := f.(first)
		return got.at, got.ok
	}
	at, ok := firstInstant(midnight, loc)
	firsts.Store(key, first{at, ok})
	return at, ok
}

// dayKey and first memoize FirstInstant, which samples the zone thousands of times.
type dayKey struct {
	loc      *time.Location
	midnight int64
}

type first struct {
	at int64
	ok bool
}

var firsts sync.Map

// firstInstant is FirstInstant of the date whose midnight, read as UTC, is midnight (Unix seconds).
func firstInstant(midnight int64, loc *time.Location) (int64, bool) {
	const reach = 30 * 3600 // beyond any zone's offset
	for _, p := range periods(midnight-reach, midnight+86400+reach, loc) {
		// In this period the local date is y-m-d for [midnight-off, midnight+86400-off).
		from, to := max(p.from, midnight-p.off), min(p.to, midnight+86400-p.off)
		if from < to {
			return from * int64(time.Second), true
		}
	}
	return 0, false
}

// period is a span [from, to) of Unix seconds in which a zone's offset
// (seconds east of UTC) stays off.
type period struct{ from, to, off int64 }

// periods splits [lo, hi) into the zone's periods of constant offset. It
// reads offsets only through time.Time.Zone, sampled every quarter hour
// and bisected to the second (zones change offset on whole seconds, never
// twice within a quarter hour), because time.Time.ZoneBounds ends some
// periods early in a leap year past the zone's last listed transition.
func periods(lo, hi int64, loc *time.Location) []period {
	const step = 900
	offAt := func(s int64) int64 {
		_, off := time.Unix(s, 0).In(loc).Zone()
		return int64(off)
	}
	var out []period
	cur := period{from: lo, off: offAt(lo)}
	for s := lo; s < hi; s += step {
		next := min(s+step, hi)
		if offAt(next) == cur.off {
			continue
		}
		a, b := s, next // offAt(a) == cur.off, offAt(b) != cur.off
		for b-a > 1 {
			if mid := a + (b-a)/2; offAt(mid) == cur.off {
				a = mid
			} else {
				b = mid
			}
		}
		cur.to = b
		out = append(out, cur)
		cur = period{from: b, off: offAt(b)}
	}
	cur.to = hi
	return append(out, cur)
}

package rule

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // a zone named in a rule reads the same on every machine
)

// Forms lists the ways a rule may be written, for error messages.
const Forms = "a rule is LIMIT[ UNIT]/WINDOW[ KIND], for example 5/1s, 90000 tokens/1m, " +
	"5000/1h fixed, 5000/1h fixed at 00:30, 10000/1d fixed at 00:00 America/New_York, " +
	"10/1s burst 20, 100/1m first-call, 10000/24h:b96"

// kindWord marks the words that start a rule's KIND.
var kindWord = map[string]bool{"sliding": true, "fixed": true, "burst": true, "first-call": true}

// callWord marks the units that mean calls: "5 calls/1s" is "5/1s".
var callWord = map[string]bool{"call": true, "calls": true, "request": true, "requests": true, "req": true, "reqs": true, "send": true, "sends": true}

func validUnit(u string) bool {
	if u == "" || u[0] < 'a' || u[0] > 'z' || kindWord[u] {
		return false
	}
	for _, c := range []byte(u) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// parseKind reads the KIND words of a rule into r.
func (r *Rule) parseKind(words []string) error {
	if len(words) == 0 {
		return nil
	}
	bad := fmt.Errorf("kind %q: %s", strings.Join(words, " "), Forms)
	switch {
	case len(words) == 1 && words[0] == "sliding":
		r.Kind = Sliding
	case len(words) == 1 && words[0] == "first-call":
		r.Kind = FirstCall
	case words[0] == "burst" && len(words) == 2:
		b, err := strconv.Atoi(words[1])
		if err != nil || b <= 0 || words[1][0] == '+' {
			return fmt.Errorf("burst %q: want a whole number above 0", words[1])
		}
		r.Kind, r.Burst = Bucket, b
	case words[0] == "fixed" && len(words) == 1:
		r.Kind = Fixed
	case words[0] == "fixed" && (len(words) == 3 || len(words) == 4) && words[1] == "at":
		o, err := parseOffset(words[2])
		if err != nil {
			return err
		}
		r.Kind, r.Offset = Fixed, o
		if len(words) == 4 {
			if o != 0 {
				return fmt.Errorf("fixed at %s %s: windows in a time zone start at 00:00", words[2], words[3])
			}
			r.Zone = words[3]
		}
	default:
		return bad
	}
	return nil
}

// parseOffset reads "HH:MM", "HH:MM:SS" or a Go duration.
func parseOffset(s string) (time.Duration, error) {
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		var n [3]int
		ok := len(parts) <= 3
		for i := 0; ok && i < len(parts); i++ {
			v, err := strconv.Atoi(parts[i])
			ok = err == nil && len(parts[i]) == 2 && v >= 0 && (i == 0 && v < 24 || i > 0 && v < 60)
			n[i] = v
		}
		if !ok || len(parts) < 2 {
			return 0, fmt.Errorf("offset %q: want a clock time HH:MM or HH:MM:SS, or a duration (30m)", s)
		}
		return time.Duration(n[0])*time.Hour + time.Duration(n[1])*time.Minute + time.Duration(n[2])*time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("offset %q: want a clock time HH:MM or HH:MM:SS, or a duration (30m)", s)
	}
	return d, nil
}

// Validate reports whether r is a rule the checker can judge; Parse
// returns only rules that pass it.
func (r Rule) Validate() error {
	switch {
	case r.Limit <= 0:
		return fmt.Errorf("limit must be positive")
	case r.Window <= 0:
		return fmt.Errorf("window must be positive")
	case r.Unit != "" && !validUnit(r.Unit):
		return fmt.Errorf("unit %q: want a lower-case word of letters, digits and _ (tokens, input_tokens)", r.Unit)
	case r.Kind > FirstCall:
		return fmt.Errorf("unknown kind %d", r.Kind)
	case r.Kind != Sliding && r.Buckets != 0:
		return fmt.Errorf("bookkeeping (:exact, :bK) is for sliding rules only")
	case r.Kind != Bucket && r.Burst != 0:
		return fmt.Errorf("a burst is for bucket rules only")
	case r.Kind == Bucket && r.Burst <= 0:
		return fmt.Errorf("burst must be positive")
	case r.Kind != Fixed && (r.Offset != 0 || r.Zone != ""):
		return fmt.Errorf("an offset or time zone is for fixed rules only")
	case r.Offset < 0 || r.Offset >= r.Window:
		return fmt.Errorf("offset %v must be at least 0 and shorter than the window %v", r.Offset, FormatWindow(r.Window))
	}
	if r.Zone != "" {
		if r.Window != 24*time.Hour || r.Offset != 0 {
			return fmt.Errorf("time zone %s: only a daily window (1d) from 00:00 may follow a zone", r.Zone)
		}
		if _, err := r.Location(); err != nil {
			return err
		}
	}
	return nil
}

// Location loads a fixed rule's time zone; nil when the rule names none.
func (r Rule) Location() (*time.Location, error) {
	if r.Zone == "" {
		return nil, nil
	}
	if r.Zone == "Local" || strings.EqualFold(r.Zone, "local") {
		return nil, fmt.Errorf("time zone %q: name an IANA zone (America/New_York, UTC)", r.Zone)
	}
	loc, err := time.LoadLocation(r.Zone)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: not an IANA zone (America/New_York, UTC)", r.Zone)
	}
	return loc, nil
}

// FixedStart returns the start of the window of a fixed rule r that holds
// the instant at (ns since the epoch): k*Window+Offset for the greatest k
// that is not after at, or, with a zone, the first instant of at's local
// date there (a zone may skip its midnight). It is clamped to the int64
// range. The checker lays out the same windows.
func (r Rule) FixedStart(at int64) (int64, error) {
	from, _, err := r.FixedWindow(at)
	return from, err
}

// FixedWindow returns the window [from, to) of a fixed rule r that holds
// the instant at, clamped to the int64 range (see FixedStart).
func (r Rule) FixedWindow(at int64) (from, to int64, err error) {
	if r.Kind != Fixed {
		return 0, 0, fmt.Errorf("rule %s: not a fixed rule", r)
	}
	loc, err := r.Location()
	if err != nil {
		return 0, 0, err
	}
	from, to = FixedSpan(at, int64(r.Window), int64(r.Offset), loc)
	return from, to, nil
}

// FloorDiv is a divided by b rounded toward minus infinity (Go's / rounds
// toward zero): the index of the fixed window of width b holding a.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// FixedSpan is FixedWindow's layout with the rule's parts given, for a
// caller that asks for many windows of one rule: windows of w ns shifted
// by o from the epoch, or with loc (Location's zone) its local days.
func FixedSpan(at, w, o int64, loc *time.Location) (from, to int64) {
	if loc != nil {
		y, m, d := time.Unix(0, at).In(loc).Date()
		from, to = localDayStart(loc, y, m, d), localDayStart(loc, y, m, d+1)
		if to <= at { // the end of a date lived again after the next began
			from, to = to, localDayStart(loc, y, m, d+2)
		}
		return from, to
	}
	rem := at % w
	if rem < 0 {
		rem += w
	}
	back := rem - o // how far at lies past its window's start
	if back < 0 {
		back += w
	}
	from, to = math.MinInt64, math.MaxInt64
	if at >= math.MinInt64+back {
		from = at - back
	}
	if rest := w - back; at <= math.MaxInt64-rest {
		to = at + rest
	}
	return from, to
}

// localDayStart returns the first instant whose local date in loc is
// y-m-d or later (time.Date normalizes d), clamped to the int64 range.
func localDayStart(loc *time.Location, y int, m time.Month, d int) int64 {
	date := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	want := date.Year()*10000 + int(date.Month())*100 + date.Day()
	reached := func(ns int64) bool {
		yy, mm, dd := time.Unix(0, ns).In(loc).Date()
		return yy*10000+int(mm)*100+dd >= want
	}
	guess := time.Date(date.Year(), date.Month(), date.Day(), 0, 0, 0, 0, loc)
	lo, hi := clampNanos(guess.Add(-48*time.Hour)), clampNanos(guess.Add(48*time.Hour))
	if reached(lo) {
		return lo
	}
	if !reached(hi) {
		return math.MaxInt64
	}
	return firstReached(loc, lo, bisect(lo, hi, reached), reached)
}

// bisect returns the instant in (lo, hi] after one where reached turns
// true, given reached(lo) false and reached(hi) true.
func bisect(lo, hi int64, reached func(int64) bool) int64 {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if reached(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// firstReached moves first, an instant where reached turns true, back to
// the first instant after lo that reached the date. They differ where a
// zone turned its clock back across midnight (America/St_Johns and
// Goose_Bay in 1987-2010, from 00:01 back to 23:01): the date was reached,
// left and reached again, and bisecting may find the second time. Within
// one period of a single offset the local date never goes back.
func firstReached(loc *time.Location, lo, first int64, reached func(int64) bool) int64 {
	for first > lo {
		start, _ := time.Unix(0, first-1).In(loc).ZoneBounds()
		turn := clampNanos(start)
		if start.IsZero() || turn <= lo || !reached(turn-1) {
			return first
		}
		from := lo // the period before the turn, where the date was first reached
		if prev, _ := time.Unix(0, turn-1).In(loc).ZoneBounds(); !prev.IsZero() {
			from = max(lo, clampNanos(prev))
		}
		if reached(from) {
			first = from
		} else {
			first = bisect(from, turn-1, reached)
		}
	}
	return first
}

func clampNanos(t time.Time) int64 {
	switch {
	case t.Before(time.Unix(0, math.MinInt64)):
		return math.MinInt64
	case t.After(time.Unix(0, math.MaxInt64)):
		return math.MaxInt64
	}
	return t.UnixNano()
}

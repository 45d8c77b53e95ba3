package sendlog

import (
	"cmp"
	"errors"
	"fmt"
	"time"
)

// Unit is the unit of numeric timestamps.
type Unit int

const (
	UnitAuto Unit = iota // detect integers from their digit count; decimals are seconds
	UnitSeconds
	UnitMillis
	UnitMicros
	UnitNanos
)

var unitNames = [...]string{"auto", "s", "ms", "us", "ns"}

func (u Unit) String() string { return unitNames[u] }

// ParseUnit reads auto, s, ms, us or ns.
func ParseUnit(s string) (Unit, error) {
	for i, n := range unitNames {
		if s == n {
			return Unit(i), nil
		}
	}
	if s == "µs" {
		return UnitMicros, nil
	}
	return 0, fmt.Errorf("unit %q: want auto, s, ms, us or ns", s)
}

// exp10 is the power of ten that turns the unit into nanoseconds.
func (u Unit) exp10() int {
	switch u {
	case UnitMillis:
		return 6
	case UnitMicros:
		return 3
	case UnitNanos:
		return 0
	}
	return 9
}

// unitForDigits guesses the unit of an integer epoch from its digit count:
// epoch seconds have 10 digits today, milliseconds 13, microseconds 16 and
// nanoseconds 19. Shorter integers are taken as seconds.
func unitForDigits(n int) Unit {
	switch {
	case n >= 18:
		return UnitNanos
	case n >= 15:
		return UnitMicros
	case n >= 12:
		return UnitMillis
	}
	return UnitSeconds
}

var (
	errEmpty     = errors.New("missing timestamp")
	errNegative  = errors.New("negative timestamp")
	errTooBig    = errors.New("timestamp out of range (beyond year 2262 in nanoseconds)")
	errTooFine   = errors.New("timestamp finer than a nanosecond")
	errNotNumber = errors.New("not a timestamp (want decimal seconds, an integer epoch or RFC 3339)")
)

// number is a parsed decimal: value = digits × 10^exp, exactly.
type number struct {
	mant     uint64
	exp      int
	intDigit int  // digits before the decimal point, leading zeros included
	decimal  bool // had a point or an exponent
}

// parseNumber reads an unsigned decimal with optional fraction and exponent,
// exactly. It accepts at most 19 significant digits.
func parseNumber(b []byte) (number, error) {
	var n number
	i := 0
	if len(b) > 0 && b[0] == '+' {
		i++
	}
	digits, sig := 0, 0
	seenPoint := false
	for ; i < len(b); i++ {
		c := b[i]
		if c == '.' {
			if seenPoint {
				return n, errNotNumber
			}
			seenPoint, n.decimal = true, true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
		if !seenPoint {
			n.intDigit++
		}
		if c == '0' && sig == 0 {
			if seenPoint {
				n.exp--
			}
			continue
		}
		if sig == 19 {
			// More significant digits than int64 nanoseconds can need:
			// keep them only if they are zeros.
			if c != '0' {
				if !seenPoint {
					return n, errTooBig
				}
				return n, errTooFine
			}
			if !seenPoint {
				n.exp++
			}
			continue
		}
		n.mant = n.mant*10 + uint64(c-'0')
		sig++
		if seenPoint {
			n.exp--
		}
	}
	if digits == 0 {
		return n, errNotNumber
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		n.decimal = true
		i++
		neg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			neg = b[i] == '-'
			i++
		}
		e, ed := 0, 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if e < 1000 {
				e = e*10 + int(b[i]-'0')
			}
			ed++
		}
		if ed == 0 {
			return n, errNotNumber
		}
		if e > 100 {
			return n, errTooBig // no timestamp needs such an exponent, even for zero
		}
		if neg {
			e = -e
		}
		n.exp += e
	}
	if i != len(b) {
		return n, errNotNumber
	}
	return n, nil
}

// parseDigits is the fast path for the common case, a plain integer of at
// most 19 digits; ok is false for anything else.
func parseDigits(b []byte) (number, bool) {
	if len(b) > 19 {
		return number{}, false
	}
	var v uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return number{}, false
		}
		v = v*10 + uint64(d)
	}
	return number{mant: v, intDigit: len(b)}, true
}

// nanos scales the number by 10^shift into int64 nanoseconds, exactly.
func (n number) nanos(shift int) (int64, error) {
	v, e := n.mant, n.exp+shift
	if v == 0 {
		return 0, nil
	}
	for ; e < 0; e++ {
		if v%10 != 0 {
			return 0, errTooFine
		}
		v /= 10
	}
	for ; e > 0; e-- {
		if v > (1<<63-1)/10 {
			return 0, errTooBig
		}
		v *= 10
	}
	if v > 1<<63-1 {
		return 0, errTooBig
	}
	return int64(v), nil
}

// minTime and maxTime bound what int64 Unix nanoseconds can hold.
var (
	minTime = time.Unix(0, 0)
	maxTime = time.Unix(0, 1<<63-1)
)

// parseRFC3339 reads "2024-05-01T12:00:00.123456789Z", also with a space
// for the T; a time with no zone is read in zone, or refused saying so
// when zone is nil.
func parseRFC3339(s string, zone *time.Location) (int64, error) {
	given := s
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		local, lerr := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, cmp.Or(zone, time.UTC))
		switch {
		case lerr == nil && zone == nil:
			return 0, fmt.Errorf("time %q has no time zone (no Z and no offset such as +01:00): give the zone the log was written in (sendlog.Options.Zone)", given)
		case lerr == nil:
			t = local
		default:
			return 0, fmt.Errorf("time %q is not an RFC 3339 time (2026-01-05T09:00:00.000Z, 2026-01-05 09:00:00+01:00)", given)
		}
	}
	if t.Before(minTime) {
		return 0, errNegative
	}
	if t.After(maxTime) {
		return 0, errTooBig
	}
	return t.UnixNano(), nil
}

// looksLikeDate reports whether b starts like an RFC 3339 date (YYYY-).
func looksLikeDate(b []byte) bool {
	return len(b) >= 5 && b[4] == '-' && isDigit(b[0]) && isDigit(b[1]) && isDigit(b[2]) && isDigit(b[3])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// timeParser turns timestamp text into nanoseconds, detecting the unit of
// integer epochs from the first one it sees and holding later ones to it.
type timeParser struct {
	unit     Unit // as given; UnitAuto until detected
	given    bool
	detected string         // how the unit was chosen, for the report
	digits   int            // the digit count the unit was detected from
	from     string         // the column or field name the given unit was read from
	zone     *time.Location // of times written without one; nil: an error
}

// mixedUnits is the error for an integer whose digit count points to
// another unit than the one detected: read in that unit, it would be off by
// a factor of 1,000 or more.
func mixedUnits(digits int, unit Unit) error {
	return fmt.Errorf("a %d-digit integer looks like %s, but earlier integers were taken as %s; set sendlog.Options.Unit", digits, unitForDigits(digits), unit)
}

func newTimeParser(u Unit) *timeParser {
	return &timeParser{unit: u, given: u != UnitAuto}
}

// parse returns the timestamp in b in nanoseconds.
func (p *timeParser) parse(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errEmpty
	}
	if b[0] == '-' {
		return 0, errNegative
	}
	if looksLikeDate(b) {
		if p.detected == "" {
			p.detected = "RFC 3339 times"
		}
		return parseRFC3339(string(b), p.zone)
	}
	n, ok := parseDigits(b)
	if !ok {
		var err error
		if n, err = parseNumber(b); err != nil {
			return 0, err
		}
	}
	u := p.unit
	if !p.given {
		if n.decimal {
			u = UnitSeconds
			if p.detected == "" {
				p.detected = "decimal seconds"
			}
		} else {
			guess := unitForDigits(n.intDigit)
			if p.unit == UnitAuto {
				p.unit, p.digits = guess, n.intDigit
				p.detected = fmt.Sprintf("%s (detected from %d-digit integers; set --unit to override)", guess, n.intDigit)
			} else if guess != p.unit {
				return 0, mixedUnits(n.intDigit, p.unit)
			}
			u = p.unit
		}
	}
	ns, err := n.nanos(u.exp10())
	if err == errTooBig && p.given && !n.decimal {
		return 0, unitTooCoarse(b, n.intDigit, u)
	}
	return ns, err
}

// unitTooCoarse is the error for an integer that overflows in the unit it
// was given: it says what was read and which unit its digits suggest.
func unitTooCoarse(b []byte, digits int, u Unit) error {
	msg := fmt.Sprintf("timestamp out of range: %s read in %s is beyond the year 2262", b, u)
	fits := unitForDigits(digits)
	n, _ := parseNumber(b)
	ns, err := n.nanos(fits.exp10())
	if fits.exp10() >= u.exp10() || err != nil {
		return errors.New(msg)
	}
	return &fixError{
		msg: fmt.Sprintf("%s; as a %d-digit epoch in %s it is %s", msg, digits, fits, time.Unix(0, ns).UTC().Format(time.RFC3339Nano)),
		fix: Fix{Option: "Unit", Value: fits.String()},
	}
}

// fastInt converts an integer of the given digit count once the unit is
// known; ok is false when the general path must decide (unit not yet
// detected, a digit count that disagrees with it, overflow).
func (p *timeParser) fastInt(v uint64, digits int) (int64, bool) {
	if p.unit == UnitAuto || !p.digitsAgree(digits) {
		return 0, false
	}
	if v > 1<<63-1 {
		return 0, false
	}
	ns, err := number{mant: v}.nanos(p.unit.exp10())
	return ns, err == nil
}

// fastScale returns the factor from integers to nanoseconds once the unit
// is fixed; ok is false while it is still to be detected.
func (p *timeParser) fastScale() (int64, bool) {
	if p.unit == UnitAuto {
		return 0, false
	}
	s := int64(1)
	for range p.unit.exp10() {
		s *= 10
	}
	return s, true
}

// digitsAgree reports whether an integer of this many digits may be read in
// the fixed unit without the general path's check.
func (p *timeParser) digitsAgree(digits int) bool {
	return p.given || unitForDigits(digits) == p.unit
}

// Detected says how timestamps were read, for reports ("decimal seconds",
// "ns (detected from 19-digit integers…)", "given: ms").
func (p *timeParser) Detected() string {
	if p.from != "" {
		return p.unit.String() + " (from the name " + p.from + ")"
	}
	if p.given {
		return "given: " + p.unit.String()
	}
	return p.detected
}

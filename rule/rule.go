package rule

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rule is the contract "at most Limit sends in any window of length Window",
// with the bookkeeping a limiter should keep for it.
//
// Buckets chooses that bookkeeping and never changes the contract: the
// checker judges Limit and Window alone. Zero leaves the choice to the
// default policy (see Keeping), Exact asks for the exact sliding log, and
// k > 0 for a window counted in k buckets. Compare contracts with
// Contract, not with ==, when the bookkeeping does not matter.
type Rule struct {
	Limit   int
	Window  time.Duration
	Buckets int
}

// Exact is the Buckets value of a rule kept as an exact sliding log.
const Exact = -1

// MaxBuckets bounds the buckets a rule may ask for; beyond it a bucketed
// window costs more than it saves.
const MaxBuckets = 1 << 16

// String formats the rule compactly, for example "5/1s", "500/1m" or
// "10000/24h", followed by ":exact" or ":bK" when the rule names its
// bookkeeping ("10000/24h:b96"). Parse reads it back.
func (r Rule) String() string {
	s := strconv.Itoa(r.Limit) + "/" + FormatWindow(r.Window)
	switch {
	case r.Buckets == Exact:
		s += ":exact"
	case r.Buckets > 0:
		s += ":b" + strconv.Itoa(r.Buckets)
	}
	return s
}

// Contract returns the rule without its bookkeeping choice: the part the
// checker judges, and the one to compare or use as a map key.
func (r Rule) Contract() Rule { return Rule{Limit: r.Limit, Window: r.Window} }

// FormatWindow is time.Duration's String without the trailing zero units
// ("1m" rather than "1m0s", "24h" rather than "24h0m0s").
func FormatWindow(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// friendly maps the unit words Parse accepts beyond Go's duration syntax.
var friendly = map[string]time.Duration{
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// refused names the unit words that look like units but have no one
// meaning, and why each is refused.
var refused = map[string]string{
	"M":      `"M" is ambiguous (a month or a minute?): write min for minutes, or a number of days (30d)`,
	"mo":     "a month has no fixed length (28 to 31 days): write a number of days (30d)",
	"month":  "a month has no fixed length (28 to 31 days): write a number of days (30d)",
	"months": "a month has no fixed length (28 to 31 days): write a number of days (30d)",
	"w":      "write a number of days (7d) for a week",
	"week":   "write a number of days (7d) for a week",
	"weeks":  "write a number of days (7d) for a week",
	"y":      "a year has no fixed length: write a number of days (365d)",
	"year":   "a year has no fixed length: write a number of days (365d)",
	"years":  "a year has no fixed length: write a number of days (365d)",
}

// unitWord looks a unit word up, case-exact: "M" is not "m", and "S" or
// "Min" are refused rather than guessed at.
func unitWord(s string) (d time.Duration, ok bool, err error) {
	if d, ok := friendly[s]; ok {
		return d, true, nil
	}
	if why, ok := refused[s]; ok {
		return 0, false, errors.New(why)
	}
	if _, ok := friendly[strings.ToLower(s)]; ok {
		return 0, false, fmt.Errorf("unit %q: units are lower case (%s)", s, strings.ToLower(s))
	}
	return 0, false, nil
}

// Parse reads a rule written "LIMIT/WINDOW", optionally followed by its
// bookkeeping: ":exact" for the exact sliding log, ":bK" for K buckets
// ("10000/day:b96"). WINDOW is any Go duration ("1s", "1m30s", "24h"), a
// unit word alone ("s", "sec", "second", "min", "minute", "h", "hour", "d",
// "day", meaning one of that unit), or a whole number followed by a unit
// word ("3d", "10min").
func Parse(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	text, keeping, hasKeeping := strings.Cut(s, ":")
	buckets := 0
	if hasKeeping {
		b, err := ParseKeeping(strings.TrimSpace(keeping))
		if err != nil {
			return Rule{}, fmt.Errorf("rule %q: %v", s, err)
		}
		buckets = b
	}
	limitText, windowText, ok := strings.Cut(text, "/")
	if !ok {
		return Rule{}, fmt.Errorf("rule %q: want LIMIT/WINDOW, for example 5/1s or 10/min", s)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(limitText))
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: limit %q is not a whole number", s, limitText)
	}
	if limit <= 0 {
		return Rule{}, fmt.Errorf("rule %q: limit must be positive", s)
	}
	window, err := ParseWindow(strings.TrimSpace(windowText))
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %v", s, err)
	}
	if int64(buckets) > int64(window) {
		return Rule{}, fmt.Errorf("rule %q: %d buckets are more than the window's %d ns", s, buckets, int64(window))
	}
	return Rule{Limit: limit, Window: window, Buckets: buckets}, nil
}

// ParseKeeping reads the bookkeeping part of a rule, after the colon:
// "exact" (Exact) or "bK" with 1 <= K <= MaxBuckets (K).
func ParseKeeping(s string) (int, error) {
	if strings.EqualFold(s, "exact") {
		return Exact, nil
	}
	digits, ok := strings.CutPrefix(s, "b")
	if ok && digits != "" && digits[0] >= '1' && digits[0] <= '9' {
		if k, err := strconv.Atoi(digits); err == nil && k <= MaxBuckets {
			return k, nil
		}
	}
	return 0, fmt.Errorf("bookkeeping %q: want exact, or b followed by a bucket count from 1 to %d (b96)", s, MaxBuckets)
}

// ParseWindow reads the WINDOW part of a rule; see Parse.
func ParseWindow(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("window is missing")
	}
	d, err := parseWindow(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("window %q must be positive", s)
	}
	return d, nil
}

func parseWindow(s string) (time.Duration, error) {
	if unit, ok, err := unitWord(s); ok || err != nil {
		return unit, windowError(s, err)
	}
	// A whole number followed by a unit word: "3d", "10min", "2 days".
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) {
		unit, ok, err := unitWord(strings.TrimSpace(s[i:]))
		if err != nil {
			return 0, windowError(s, err)
		}
		if ok {
			n, err := strconv.ParseInt(s[:i], 10, 64)
			if err != nil || n > int64(1<<63-1)/int64(unit) {
				return 0, fmt.Errorf("window %q is too long", s)
			}
			return time.Duration(n) * unit, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("window %q is neither a Go duration (1s, 1m30s, 24h) nor a unit (s, min, h, day)", s)
	}
	return d, nil
}

func windowError(s string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("window %q: %v", s, err)
}

// ParseList reads a comma-separated list of rules ("10/s,500/min,10000/day").
func ParseList(s string) ([]Rule, error) {
	var rules []Rule
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := Parse(part)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("rule list %q names no rule", s)
	}
	return rules, nil
}

// MarshalText implements encoding.TextMarshaler, so rules read and write as
// "5/1s" in YAML and JSON.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Rule) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*r = p
	return nil
}

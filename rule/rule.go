package rule

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rule is the contract "at most Limit sends (or Limit units of cost) in any
// window of length Window", with the bookkeeping a limiter should keep for
// it. docs/semantics.md states exactly how each kind is judged.
//
// Buckets chooses that bookkeeping and never changes the contract: the
// checker judges the other fields alone. Zero leaves the choice to the
// default policy (see Keeping), Exact asks for the exact sliding log, and
// k > 0 for a window counted in k buckets. Compare contracts with
// Contract, not with ==, when the bookkeeping does not matter.
//
// The zero values of Unit, Kind, Offset, Zone and Burst give the sliding
// call rule: cost 1 per send, every window [t, t+Window).
type Rule struct {
	Limit   int
	Window  time.Duration
	Buckets int
	// Unit names the cost the rule meters ("tokens"); "" counts calls, a
	// cost of 1 per send.
	Unit string
	Kind Kind
	// Offset shifts a Fixed rule's windows from the epoch: they are
	// [k*Window+Offset, (k+1)*Window+Offset), 0 <= Offset < Window.
	Offset time.Duration
	// Zone, for a Fixed rule of one day, names the IANA time zone whose
	// local days are the windows (23, 24 or 25 hours long); Offset is 0.
	Zone string
	// Burst is a Bucket rule's capacity.
	Burst int
	// Margin is a limiter's allowance for the way to the provider on a
	// rule other than sliding (strategies.Widen sets it; a sliding rule is
	// widened instead). Like Buckets it is bookkeeping: the checker, String
	// and Contract leave it out.
	Margin time.Duration
}

// Kind says how a rule's windows are laid out.
type Kind uint8

const (
	// Sliding windows start at every instant: the default, and the
	// strictest common reading.
	Sliding Kind = iota
	// Fixed windows tile time from the epoch (or local midnight).
	Fixed
	// Bucket is a token bucket of capacity Burst refilled at Limit units
	// per Window (GCRA with the same parameters is the same rule).
	Bucket
	// FirstCall windows open at the first send after the previous one
	// closed.
	FirstCall
)

func (k Kind) String() string {
	switch k {
	case Sliding:
		return "sliding"
	case Fixed:
		return "fixed"
	case Bucket:
		return "bucket"
	case FirstCall:
		return "first-call"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// SlidingCalls reports whether r is a sliding call rule, the rule every
// part of rlcheck judges and enforces.
func (r Rule) SlidingCalls() bool { return r.Kind == Sliding && r.Unit == "" }

// Exact is the Buckets value of a rule kept as an exact sliding log.
const Exact = -1

// MaxBuckets bounds the buckets a rule may ask for; beyond it a bucketed
// window costs more than it saves.
const MaxBuckets = 1 << 16

// String formats the rule compactly, for example "5/1s", "500/1m" or
// "10000/24h", with its unit ("90000 tokens/1m"), its bookkeeping when it
// names one (":exact", ":bK") and its kind when not sliding ("5000/1h
// fixed", "10/1s burst 20"). Parse reads it back.
func (r Rule) String() string {
	s := strconv.Itoa(r.Limit)
	if r.Unit != "" {
		s += " " + r.Unit
	}
	s += "/" + FormatWindow(r.Window)
	switch {
	case r.Buckets == Exact:
		s += ":exact"
	case r.Buckets > 0:
		s += ":b" + strconv.Itoa(r.Buckets)
	}
	switch r.Kind {
	case Sliding:
	case Fixed:
		s += " fixed"
		if r.Zone != "" {
			s += " at 00:00 " + r.Zone
		} else if r.Offset != 0 {
			s += " at " + formatOffset(r.Offset)
		}
	case Bucket:
		s += " burst " + strconv.Itoa(r.Burst)
	default:
		s += " " + r.Kind.String()
	}
	return s
}

// formatOffset writes an offset as a clock time when it is whole seconds
// within a day ("00:30", "06:00:15"), else as a duration.
func formatOffset(o time.Duration) string {
	if o <= 0 || o >= 24*time.Hour || o%time.Second != 0 {
		return FormatWindow(o)
	}
	sec := int64(o / time.Second)
	s := fmt.Sprintf("%02d:%02d", sec/3600, sec/60%60)
	if sec%60 != 0 {
		s += fmt.Sprintf(":%02d", sec%60)
	}
	return s
}

// Contract returns the rule without its bookkeeping choice: the part the
// checker judges (limit, unit, window and kind), and the one to compare or
// use as a map key.
func (r Rule) Contract() Rule {
	r.Buckets, r.Margin = 0, 0
	return r
}

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

// Parse reads a rule written "LIMIT[ UNIT]/WINDOW[:KEEPING][ KIND]".
//
// UNIT names a cost ("90000 tokens/1m"); none counts calls. WINDOW is any
// Go duration ("1s", "1m30s", "24h"), a unit word alone ("s", "sec",
// "second", "min", "minute", "h", "hour", "d", "day", meaning one of that
// unit), or a whole number followed by a unit word ("3d", "10min").
// KEEPING, for sliding rules, is the bookkeeping: ":exact" for the exact
// sliding log, ":bK" for K buckets ("10000/day:b96"). KIND is "sliding"
// (the default), "fixed", "fixed at HH:MM", "fixed at 00:00 ZONE" (daily
// rules), "burst B" or "first-call".
func Parse(s string) (Rule, error) {
	s = perUnit(strings.TrimSpace(s))
	limitText, rest, ok := strings.Cut(s, "/")
	if !ok {
		return Rule{}, fmt.Errorf("rule %q: want LIMIT/WINDOW, for example 5/1s or 10/min", s)
	}
	r, err := parseLimit(limitText)
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %v", s, err)
	}
	words := strings.Fields(rest)
	k := 0
	for k < len(words) && !kindWord[words[k]] {
		k++
	}
	text, keeping, hasKeeping := strings.Cut(strings.Join(words[:k], " "), ":")
	if hasKeeping {
		if r.Buckets, err = ParseKeeping(strings.TrimSpace(keeping)); err != nil {
			return Rule{}, fmt.Errorf("rule %q: %v", s, err)
		}
	}
	if r.Window, err = ParseWindow(strings.TrimSpace(text)); err != nil {
		if strings.ContainsAny(strings.TrimSpace(text), " \t") {
			err = fmt.Errorf("%v; %s", err, Forms)
		}
		return Rule{}, fmt.Errorf("rule %q: %v", s, err)
	}
	if int64(r.Buckets) > int64(r.Window) {
		return Rule{}, fmt.Errorf("rule %q: %d buckets are more than the window's %d ns", s, r.Buckets, int64(r.Window))
	}
	if err := r.parseKind(words[k:]); err != nil {
		return Rule{}, fmt.Errorf("rule %q: %v", s, err)
	}
	if err := r.Validate(); err != nil {
		return Rule{}, fmt.Errorf("rule %q: %v", s, err)
	}
	return r, nil
}

// perRate maps the rate words providers write ("500 rpm", "90k TPM") to
// the unit and window of the rule they mean.
var perRate = map[string]string{
	"rps": "/1s", "rpm": "/1m", "rph": "/1h", "rpd": "/24h",
	"tps": " tokens/1s", "tpm": " tokens/1m", "tph": " tokens/1h", "tpd": " tokens/24h",
}

// perUnit rewrites "LIMIT rpm[ KIND]" and its kin as "LIMIT/1m[ KIND]";
// any other text is returned as it is.
func perUnit(s string) string {
	f := strings.Fields(s)
	if len(f) < 2 || strings.Contains(s, "/") {
		return s
	}
	tail, ok := perRate[strings.ToLower(f[1])]
	if !ok {
		return s
	}
	return strings.Join(append([]string{f[0] + tail}, f[2:]...), " ")
}

// limitScale reads the k and M that shorten a limit ("90k": 90,000).
var limitScale = map[byte]int{'k': 1_000, 'K': 1_000, 'M': 1_000_000}

// parseCount reads a limit: a whole number, or one followed by k or M.
func parseCount(s string) (int, error) {
	scale := 1
	if n := len(s); n > 1 && limitScale[s[n-1]] > 0 {
		scale, s = limitScale[s[n-1]], s[:n-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil || v > math.MaxInt/scale || v < math.MinInt/scale {
		return 0, strconv.ErrSyntax
	}
	return v * scale, nil
}

// runTogether splits a limit written with its unit and no space between
// them ("90000tokens", "90ktokens") into the number and the unit, where
// the number reads as a limit and the rest as a unit.
func runTogether(s string) (num, unit string, ok bool) {
	i := strings.IndexFunc(s, func(c rune) bool { return c < '0' || c > '9' })
	if i <= 0 {
		return "", "", false
	}
	if _, err := parseCount(s[:i+1]); err == nil && i+1 < len(s) && validUnit(s[i+1:]) {
		i++ // a scale suffix: "90ktokens"
	}
	if _, err := parseCount(s[:i]); err != nil || !validUnit(s[i:]) {
		return "", "", false
	}
	return s[:i], s[i:], true
}

// parseLimit reads "LIMIT" or "LIMIT UNIT".
func parseLimit(s string) (Rule, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return Rule{}, fmt.Errorf("limit %q is not a whole number, or a whole number and a unit (90000 tokens)", strings.TrimSpace(s))
	}
	limit, err := parseCount(f[0])
	if err != nil {
		if n, u, ok := runTogether(f[0]); ok && len(f) == 1 {
			return Rule{}, fmt.Errorf("limit %q is not a whole number: a unit goes after a space (%s %s)", s, n, u)
		}
		return Rule{}, fmt.Errorf("limit %q is not a whole number", s)
	}
	if limit <= 0 {
		return Rule{}, fmt.Errorf("limit must be positive")
	}
	r := Rule{Limit: limit}
	if len(f) == 2 {
		r.Unit = f[1]
		if callWord[r.Unit] {
			r.Unit = ""
		} else if !validUnit(r.Unit) {
			return Rule{}, fmt.Errorf("unit %q: want a lower-case word of letters, digits and _ (tokens, input_tokens)", f[1])
		}
	}
	return r, nil
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
	for _, part := range thousands(strings.Split(s, ",")) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		r, err := Parse(part)
		if err != nil && isDigits(strings.TrimSpace(part), 1, 20) {
			err = fmt.Errorf("%w (a comma separates rules: write 90000, not 90,000)", err)
		}
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

// thousands joins the parts of a list that a thousands separator split
// ("90,000 tokens/min" in "500/min,90,000 tokens/min"): a part of one to
// three digits alone, followed by one that starts with three digits.
func thousands(parts []string) []string {
	var out []string
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		first := isDigits(strings.TrimSpace(p), 1, 3)
		for first && i+1 < len(parts) && isDigits(strings.TrimSpace(p), 1, 20) && len(parts[i+1]) >= 3 &&
			isDigits(parts[i+1][:3], 3, 3) && (len(parts[i+1]) == 3 || parts[i+1][3] < '0' || parts[i+1][3] > '9') {
			p = strings.TrimSpace(p) + parts[i+1]
			i++
		}
		out = append(out, p)
	}
	return out
}

// isDigits reports whether s is lo to hi ASCII digits.
func isDigits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
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

// Units names the units rules meter, in the order the rules first name
// them; a call rule names none. It is the order in which a send's or a
// call's costs are given (checker.Config.Units, strategies' AcquireCost).
func Units(rules []Rule) []string {
	var units []string
	for _, r := range rules {
		if r.Unit != "" && !slices.Contains(units, r.Unit) {
			units = append(units, r.Unit)
		}
	}
	return units
}

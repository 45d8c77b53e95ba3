package rlheader

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Header is a rate-limit response header infer reads, by its log column.
type Header int

// The headers infer reads: the IETF RateLimit fields, X-RateLimit-*,
// Retry-After, OpenAI's per-unit x-ratelimit-*-requests and -tokens with
// retry-after-ms, and Anthropic's anthropic-ratelimit-* family.
const (
	HRateLimit Header = iota
	HRateLimitPolicy
	HXLimit
	HXRemaining
	HXReset
	HRetryAfter
	HLimitRequests
	HRemainingRequests
	HResetRequests
	HLimitTokens
	HRemainingTokens
	HResetTokens
	HRetryAfterMs
	HAnthropicRequestsLimit
	HAnthropicRequestsRemaining
	HAnthropicRequestsReset
	HAnthropicTokensLimit
	HAnthropicTokensRemaining
	HAnthropicTokensReset
	HAnthropicInputTokensLimit
	HAnthropicInputTokensRemaining
	HAnthropicInputTokensReset
	HAnthropicOutputTokensLimit
	HAnthropicOutputTokensRemaining
	HAnthropicOutputTokensReset
	NumHeaders
)

// headerNames are each header's HTTP name and its log column (or
// JSON-lines field) by default.
var headerNames = [NumHeaders][2]string{
	{"RateLimit", "ratelimit"},
	{"RateLimit-Policy", "ratelimit_policy"},
	{"X-RateLimit-Limit", "x_ratelimit_limit"},
	{"X-RateLimit-Remaining", "x_ratelimit_remaining"},
	{"X-RateLimit-Reset", "x_ratelimit_reset"},
	{"Retry-After", "retry_after"},
	{"X-RateLimit-Limit-Requests", "x_ratelimit_limit_requests"},
	{"X-RateLimit-Remaining-Requests", "x_ratelimit_remaining_requests"},
	{"X-RateLimit-Reset-Requests", "x_ratelimit_reset_requests"},
	{"X-RateLimit-Limit-Tokens", "x_ratelimit_limit_tokens"},
	{"X-RateLimit-Remaining-Tokens", "x_ratelimit_remaining_tokens"},
	{"X-RateLimit-Reset-Tokens", "x_ratelimit_reset_tokens"},
	{"Retry-After-Ms", "retry_after_ms"},
	{"Anthropic-RateLimit-Requests-Limit", "anthropic_ratelimit_requests_limit"},
	{"Anthropic-RateLimit-Requests-Remaining", "anthropic_ratelimit_requests_remaining"},
	{"Anthropic-RateLimit-Requests-Reset", "anthropic_ratelimit_requests_reset"},
	{"Anthropic-RateLimit-Tokens-Limit", "anthropic_ratelimit_tokens_limit"},
	{"Anthropic-RateLimit-Tokens-Remaining", "anthropic_ratelimit_tokens_remaining"},
	{"Anthropic-RateLimit-Tokens-Reset", "anthropic_ratelimit_tokens_reset"},
	{"Anthropic-RateLimit-Input-Tokens-Limit", "anthropic_ratelimit_input_tokens_limit"},
	{"Anthropic-RateLimit-Input-Tokens-Remaining", "anthropic_ratelimit_input_tokens_remaining"},
	{"Anthropic-RateLimit-Input-Tokens-Reset", "anthropic_ratelimit_input_tokens_reset"},
	{"Anthropic-RateLimit-Output-Tokens-Limit", "anthropic_ratelimit_output_tokens_limit"},
	{"Anthropic-RateLimit-Output-Tokens-Remaining", "anthropic_ratelimit_output_tokens_remaining"},
	{"Anthropic-RateLimit-Output-Tokens-Reset", "anthropic_ratelimit_output_tokens_reset"},
}

// anthropic gives each header of Anthropic's family its unit ("" for
// requests) and its part: 0 the limit, 1 the remaining, 2 the reset.
func (h Header) anthropic() (unit string, part int, ok bool) {
	if h < HAnthropicRequestsLimit || h >= NumHeaders {
		return "", 0, false
	}
	k := int(h - HAnthropicRequestsLimit)
	return []string{"", "tokens", "input_tokens", "output_tokens"}[k/3], k % 3, true
}

// HTTP is the header's HTTP name.
func (h Header) HTTP() string { return headerNames[h][0] }

// Col is the header's log column and JSON-lines field by default.
func (h Header) Col() string { return headerNames[h][1] }

// HeaderByCol returns the header whose default column is col.
func HeaderByCol(col string) (Header, bool) {
	for h := range NumHeaders {
		if h.Col() == col {
			return h, true
		}
	}
	return 0, false
}

// Limit is a limit an answer announced: N per Window (0: no window named),
// in Unit ("" counts calls).
type Limit struct {
	N      int64
	Window time.Duration
	Unit   string
	From   Header
	name   string // the policy's name in the draft's list form
}

// Remaining is the quota an answer announced left, in Unit ("" calls).
type Remaining struct {
	N    int64
	Unit string
	name string
}

// Announced is what one answer's rate-limit headers said.
type Announced struct {
	Limits    []Limit
	Remaining []Remaining
	// RetryAfter is the wait Retry-After asked for, when HasRetry.
	RetryAfter time.Duration
	HasRetry   bool
	msRetry    bool // RetryAfter came from retry-after-ms
}

// maxQuota and maxWindowSeconds bound what a header may announce.
const (
	maxQuota         = 1 << 50
	maxWindowSeconds = 100 * 365 * 24 * 3600
)

// member is one member of a header list: its item and its parameters.
type member struct {
	item   string
	params map[string]string
}

// splitList splits a header list at commas outside quoted strings, and
// each member at semicolons into its item and parameters.
func splitList(s string) ([]member, error) {
	var out []member
	for _, part := range splitOutsideQuotes(s, ',') {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := splitOutsideQuotes(part, ';')
		m := member{item: strings.TrimSpace(fields[0]), params: map[string]string{}}
		for _, p := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			m.params[strings.ToLower(strings.TrimSpace(k))] = unquote(strings.TrimSpace(v))
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("empty")
	}
	return out, nil
}

func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `\`, "")
	}
	return s
}

// Quote quotes a header's text for a message, cut to 40 bytes.
func Quote(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strconv.Quote(s)
}

// count reads a non-negative whole number no larger than maxQuota.
func count(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 || n > maxQuota {
		return 0, fmt.Errorf("%s is no count", Quote(s))
	}
	return n, nil
}

// windowParam reads a window in whole seconds (w=, or window= of the
// earlier drafts); 0 when neither is given.
func windowParam(p map[string]string) (time.Duration, error) {
	v, ok := p["w"]
	if !ok {
		v, ok = p["window"]
	}
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > maxWindowSeconds {
		return 0, fmt.Errorf("window %s is no whole number of seconds", Quote(v))
	}
	return time.Duration(n) * time.Second, nil
}

// ParsePolicy reads a list of limits: the draft's RateLimit-Policy forms,
// `10;w=1, 100;w=60` and `"name";q=10;w=1;qu="tokens"`, and a plain
// `10` (X-RateLimit-Limit).
func ParsePolicy(s string, from Header) ([]Limit, error) {
	ms, err := splitList(s)
	if err != nil {
		return nil, err
	}
	var out []Limit
	for _, m := range ms {
		l := Limit{From: from, Unit: m.params["qu"]}
		q, hasQ := m.params["q"]
		switch {
		case hasQ:
			l.name = unquote(m.item)
		case !strings.HasPrefix(m.item, `"`):
			q = m.item
		default:
			return nil, fmt.Errorf("policy %s names no quota (q=)", Quote(m.item))
		}
		if l.N, err = count(q); err != nil {
			return nil, err
		}
		if l.Window, err = windowParam(m.params); err != nil {
			return nil, err
		}
		if l.Unit == "requests" {
			l.Unit = ""
		}
		out = append(out, l)
	}
	return out, nil
}

// ParseRateLimit reads a RateLimit field: the earlier drafts' dictionary
// `limit=10, remaining=3, reset=5`, or the later list
// `"name";r=3;t=5`, whose remaining quotas are matched to the policies
// of the same answer by name.
func ParseRateLimit(s string) (*Announced, error) {
	ms, err := splitList(s)
	if err != nil {
		return nil, err
	}
	a := &Announced{}
	for _, m := range ms {
		k, v, dict := strings.Cut(m.item, "=")
		if !dict || strings.HasPrefix(m.item, `"`) {
			r, ok := m.params["r"]
			if !ok {
				return nil, fmt.Errorf("member %s gives no remaining quota (r=)", Quote(m.item))
			}
			n, err := count(r)
			if err != nil {
				return nil, err
			}
			a.Remaining = append(a.Remaining, Remaining{N: n, name: unquote(m.item)})
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "limit":
			n, err := count(v)
			if err != nil {
				return nil, err
			}
			w, err := windowParam(m.params)
			if err != nil {
				return nil, err
			}
			a.Limits = append(a.Limits, Limit{N: n, Window: w, From: HRateLimit})
		case "remaining":
			n, err := count(v)
			if err != nil {
				return nil, err
			}
			a.Remaining = append(a.Remaining, Remaining{N: n})
		case "reset":
			if _, err := count(v); err != nil {
				return nil, err
			}
		}
	}
	return a, nil
}

// ParseReset reads a reset: seconds from now, or an epoch time in
// seconds (1e9 and more) or milliseconds (1e12 and more); at is the
// answer's time (ns). It returns the wait until the reset.
func ParseReset(s string, at int64) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	switch {
	case err != nil || f < 0 || math.IsNaN(f):
	case f < 1e9:
		return time.Duration(f * 1e9), nil
	case f < 9e9:
		return time.Duration(f*1e9) - time.Duration(at), nil
	case f >= 1e12 && f < 9e12:
		return time.Duration(f*1e6) - time.Duration(at), nil
	}
	return 0, fmt.Errorf("%s is no reset time (seconds, or epoch seconds or milliseconds)", Quote(s))
}

// ParseRetryAfter reads Retry-After: whole seconds, or an HTTP date,
// which is taken relative to at (ns). A date already past asks for no
// wait (RFC 9110 §10.2.3: the time after which to retry), so the wait is
// 0, never negative.
func ParseRetryAfter(s string, at int64) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > maxWindowSeconds {
			return 0, fmt.Errorf("%s is no wait", Quote(s))
		}
		return time.Duration(n) * time.Second, nil
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return 0, fmt.Errorf("%s is neither seconds nor an HTTP date", Quote(s))
	}
	wait := t.Sub(time.Unix(0, at)) // saturates rather than wraps
	if wait > maxWindowSeconds*time.Second {
		return 0, fmt.Errorf("%s is an HTTP date more than 100 years after the answer: no wait a provider asks for", Quote(s))
	}
	return max(wait, 0), nil
}

// ParseRetryAfterMs reads retry-after-ms: a wait in milliseconds, whole
// or fractional, as OpenAI and Azure OpenAI send it.
func ParseRetryAfterMs(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || f > maxWindowSeconds*1e3 || math.IsNaN(f) {
		return 0, fmt.Errorf("%s is no wait in milliseconds", Quote(s))
	}
	return time.Duration(f * 1e6), nil
}

// ParseInstantReset reads a reset given as an RFC 3339 instant
// (Anthropic's): the wait from at (ns) until it, 0 when it is past.
func ParseInstantReset(s string, at int64) (time.Duration, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s is no RFC 3339 instant", Quote(s))
	}
	wait := t.Sub(time.Unix(0, at))
	if wait > maxWindowSeconds*time.Second {
		return 0, fmt.Errorf("%s is more than 100 years after the answer: no reset a provider announces", Quote(s))
	}
	return max(wait, 0), nil
}

// ParseUnitReset reads a per-unit reset: a duration ("6m0s", "20ms") or
// seconds.
func ParseUnitReset(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > maxWindowSeconds {
		return 0, fmt.Errorf("%s is no duration", Quote(s))
	}
	return time.Duration(f * 1e9), nil
}

// ParseAnswer reads one answer's raw headers (by Header, "" when the
// answer had none) at time at (ns). A header that does not parse is left
// out and named in bad, with its error.
func ParseAnswer(raw *[NumHeaders]string, at int64) (a *Announced, bad []BadHeader) {
	a = &Announced{}
	for h := range NumHeaders {
		s := raw[h]
		if strings.TrimSpace(s) == "" {
			continue
		}
		if err := a.add(h, s, at); err != nil {
			bad = append(bad, BadHeader{Header: h, Text: s, Err: err})
		}
	}
	a.matchNames()
	return a, bad
}

// BadHeader is a header that did not parse.
type BadHeader struct {
	Header Header
	Text   string
	Err    error
}

func (a *Announced) add(h Header, s string, at int64) error {
	if unit, part, ok := h.anthropic(); ok {
		return a.addAnthropic(h, unit, part, s, at)
	}
	switch h {
	case HRateLimit:
		r, err := ParseRateLimit(s)
		if err == nil {
			a.Limits, a.Remaining = append(a.Limits, r.Limits...), append(a.Remaining, r.Remaining...)
		}
		return err
	case HRateLimitPolicy, HXLimit, HLimitRequests, HLimitTokens:
		ls, err := ParsePolicy(s, h)
		for i := range ls {
			if h == HLimitTokens {
				ls[i].Unit = "tokens"
			}
		}
		a.Limits = append(a.Limits, ls...)
		return err
	case HXRemaining, HRemainingRequests, HRemainingTokens:
		n, err := count(s)
		if err == nil {
			unit := map[Header]string{HRemainingTokens: "tokens"}[h]
			a.Remaining = append(a.Remaining, Remaining{N: n, Unit: unit})
		}
		return err
	case HXReset:
		_, err := ParseReset(s, at)
		return err
	case HRetryAfter:
		d, err := ParseRetryAfter(s, at)
		if err == nil && !a.msRetry {
			a.RetryAfter, a.HasRetry = d, true
		}
		return err
	case HRetryAfterMs:
		// The finer of the two waits wins: Retry-After is whole seconds.
		d, err := ParseRetryAfterMs(s)
		if err == nil {
			a.RetryAfter, a.HasRetry, a.msRetry = d, true, true
		}
		return err
	}
	_, err := ParseUnitReset(s) // HResetRequests, HResetTokens
	return err
}

// addAnthropic reads one header of Anthropic's family: a limit or what
// remains in unit (no window named), or a reset instant.
func (a *Announced) addAnthropic(h Header, unit string, part int, s string, at int64) error {
	switch part {
	case 0:
		n, err := count(s)
		if err == nil {
			a.Limits = append(a.Limits, Limit{N: n, Unit: unit, From: h})
		}
		return err
	case 1:
		n, err := count(s)
		if err == nil {
			a.Remaining = append(a.Remaining, Remaining{N: n, Unit: unit})
		}
		return err
	}
	_, err := ParseInstantReset(s, at)
	return err
}

// matchNames gives each named remaining quota the unit of the policy of
// the same name.
func (a *Announced) matchNames() {
	for i, r := range a.Remaining {
		if r.name == "" {
			continue
		}
		for _, l := range a.Limits {
			if l.name == r.name {
				a.Remaining[i].Unit = l.Unit
			}
		}
	}
}

// RefusedWithRoom reports whether a refusal's answer contradicts itself:
// it announced a remaining call quota, and every remaining quota it
// announced, in any unit, was above 0.
func (a *Announced) RefusedWithRoom() bool {
	calls := false
	for _, r := range a.Remaining {
		if r.N == 0 {
			return false
		}
		calls = calls || r.Unit == ""
	}
	return calls
}

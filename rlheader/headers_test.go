package rlheader

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePolicyForms(t *testing.T) {
	for _, c := range []struct {
		text string
		want []Limit
	}{
		{"10;w=1, 100;w=60", []Limit{{N: 10, Window: time.Second}, {N: 100, Window: time.Minute}}},
		{`"10-per-1s";q=10;w=1, "500-tokens-per-1m";q=500;w=60;qu="tokens"`,
			[]Limit{{N: 10, Window: time.Second, name: "10-per-1s"}, {N: 500, Window: time.Minute, Unit: "tokens", name: "500-tokens-per-1m"}}},
		{`"calls";q=7;w=1;qu="requests"`, []Limit{{N: 7, Window: time.Second, name: "calls"}}},
		{"100, 100;window=3600", []Limit{{N: 100}, {N: 100, Window: time.Hour}}},
		{" 5000 ", []Limit{{N: 5000}}},
	} {
		got, err := ParsePolicy(c.text, HRateLimitPolicy)
		require.NoError(t, err, c.text)
		for i := range c.want {
			c.want[i].From = HRateLimitPolicy
		}
		assert.Equal(t, c.want, got, c.text)
	}
	for _, bad := range []string{"", " , ", "ten", "10;w=x", "10;w=0", "-1", `"name";w=1`, "10;w=1.5", "99999999999999999999"} {
		_, err := ParsePolicy(bad, HRateLimitPolicy)
		assert.Error(t, err, bad)
	}
}

func TestParseRateLimitForms(t *testing.T) {
	a, err := ParseRateLimit("limit=10, remaining=3, reset=5")
	require.NoError(t, err)
	assert.Equal(t, []Limit{{N: 10, From: HRateLimit}}, a.Limits)
	assert.Equal(t, []Remaining{{N: 3}}, a.Remaining)

	// The later draft's list names the policies of the same answer.
	raw := [NumHeaders]string{
		HRateLimitPolicy: `"calls";q=10;w=1, "tok";q=900;w=60;qu="tokens"`,
		HRateLimit:       `"calls";r=4;t=1, "tok";r=0;t=30`,
	}
	ann, bad := ParseAnswer(&raw, 0)
	require.Empty(t, bad)
	assert.Equal(t, []Remaining{{N: 4, name: "calls"}, {N: 0, Unit: "tokens", name: "tok"}}, ann.Remaining)
	assert.False(t, ann.RefusedWithRoom(), "the token quota is spent: that explains a 429")

	for _, bad := range []string{"", "limit=x", "remaining=-2", `"calls";t=1`, "reset=soon"} {
		_, err := ParseRateLimit(bad)
		assert.Error(t, err, bad)
	}
}

func TestParseResetAndRetryAfter(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	for _, c := range []struct {
		text string
		want time.Duration
	}{
		{"5", 5 * time.Second},
		{"0.25", 250 * time.Millisecond},
		{fmt.Sprint(at/1e9 + 30), 30 * time.Second},          // epoch seconds
		{fmt.Sprint(at/1e6 + 1500), 1500 * time.Millisecond}, // epoch milliseconds
	} {
		got, err := ParseReset(c.text, at)
		require.NoError(t, err, c.text)
		assert.Equal(t, c.want, got, c.text)
	}
	for _, bad := range []string{"", "-1", "NaN", "9500000000", "soon"} {
		_, err := ParseReset(bad, at)
		assert.Error(t, err, bad)
	}

	d, err := ParseRetryAfter("120", at)
	require.NoError(t, err)
	assert.Equal(t, 2*time.Minute, d)
	d, err = ParseRetryAfter("Fri, 02 Jan 2026 03:04:15 GMT", at)
	require.NoError(t, err)
	assert.Equal(t, 10*time.Second, d)
	for _, bad := range []string{"", "-5", "tomorrow", "1.5"} {
		_, err := ParseRetryAfter(bad, at)
		assert.Error(t, err, bad)
	}

	for text, want := range map[string]time.Duration{"6m0s": 6 * time.Minute, "20ms": 20 * time.Millisecond, "1.5": 1500 * time.Millisecond} {
		got, err := ParseUnitReset(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
	for _, bad := range []string{"", "-1s", "soon"} {
		_, err := ParseUnitReset(bad)
		assert.Error(t, err, bad)
	}
}

// FuzzHeaderParsers: no header text makes a parser panic, and what parses
// is within bounds.
func FuzzHeaderParsers(f *testing.F) {
	for _, s := range []string{"10;w=1, 100;w=60", `"a";q=5;w=2;qu="tokens"`, "limit=10, remaining=3, reset=5",
		`"a";r=0;t=3`, "120", "Fri, 02 Jan 2026 03:04:15 GMT", "1700000000", "6m0s", `"a\"b";q=1`, ",;=\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ls, err := ParsePolicy(s, HXLimit); err == nil {
			for _, l := range ls {
				require.True(t, l.N >= 0 && l.N <= maxQuota && l.Window >= 0, "%q: %+v", s, l)
			}
		}
		if a, err := ParseRateLimit(s); err == nil {
			for _, r := range a.Remaining {
				require.True(t, r.N >= 0 && r.N <= maxQuota)
			}
		}
		ParseReset(s, 0)
		ParseRetryAfter(s, 0)
		if d, err := ParseUnitReset(s); err == nil {
			require.GreaterOrEqual(t, d, time.Duration(0))
		}
		var raw [NumHeaders]string
		for h := range raw {
			raw[h] = s
		}
		_, bad := ParseAnswer(&raw, 0)
		require.LessOrEqual(t, len(bad), int(NumHeaders))
	})
}

// TestRetryAfterMessages: a date already past asks for no wait (0, never
// negative); a date far ahead is named as an HTTP date out of reach, not as
// text that is none.
func TestRetryAfterMessages(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	d, err := ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", at)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), d, "a past date: retry now")
	_, err = ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", at)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is an HTTP date more than 100 years after the answer")
	assert.NotContains(t, err.Error(), "neither")
}

// TestParseProviderFamilies: Anthropic's anthropic-ratelimit-* family
// (RFC 3339 resets) and OpenAI's retry-after-ms, which is finer than
// Retry-After and wins over it.
func TestParseProviderFamilies(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	raw := [NumHeaders]string{
		HAnthropicRequestsLimit:         "50",
		HAnthropicRequestsRemaining:     "0",
		HAnthropicRequestsReset:         "2026-01-02T03:04:07Z",
		HAnthropicInputTokensLimit:      "30000",
		HAnthropicInputTokensRemaining:  "29000",
		HAnthropicInputTokensReset:      "2026-01-02T03:04:06Z",
		HAnthropicOutputTokensLimit:     "8000",
		HAnthropicOutputTokensRemaining: "7990",
		HAnthropicOutputTokensReset:     "2026-01-02T03:04:06Z",
		HAnthropicTokensRemaining:       "36990",
		HRetryAfter:                     "2",
	}
	a, bad := ParseAnswer(&raw, at)
	require.Empty(t, bad)
	assert.Equal(t, []Limit{
		{N: 50, From: HAnthropicRequestsLimit},
		{N: 30000, Unit: "input_tokens", From: HAnthropicInputTokensLimit},
		{N: 8000, Unit: "output_tokens", From: HAnthropicOutputTokensLimit},
	}, a.Limits)
	assert.Equal(t, []Remaining{{N: 0}, {N: 36990, Unit: "tokens"}, {N: 29000, Unit: "input_tokens"}, {N: 7990, Unit: "output_tokens"}}, a.Remaining)
	assert.Equal(t, 2*time.Second, a.RetryAfter)
	assert.False(t, a.RefusedWithRoom(), "no request left: that explains a 429")

	raw = [NumHeaders]string{HLimitRequests: "6", HRemainingRequests: "0", HResetRequests: "966ms", HRetryAfter: "1", HRetryAfterMs: "966"}
	a, bad = ParseAnswer(&raw, at)
	require.Empty(t, bad)
	assert.True(t, a.HasRetry)
	assert.Equal(t, 966*time.Millisecond, a.RetryAfter, "retry-after-ms, not the whole second")

	raw = [NumHeaders]string{HAnthropicRequestsReset: "in 2 seconds", HRetryAfterMs: "-3", HAnthropicTokensLimit: "x"}
	_, bad = ParseAnswer(&raw, at)
	assert.Len(t, bad, 3)
	for _, ok := range []string{"2026-01-02T03:04:05.5Z", "2026-01-02T03:04:00Z"} {
		_, err := ParseInstantReset(ok, at)
		assert.NoError(t, err, ok)
	}
	d, err := ParseRetryAfterMs("12.5")
	require.NoError(t, err)
	assert.Equal(t, 12500*time.Microsecond, d)
}

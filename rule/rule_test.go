package rule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Rule
	}{
		{"5/1s", Rule{Limit: 5, Window: time.Second}},
		{"12/3s", Rule{Limit: 12, Window: 3 * time.Second}},
		{"10/s", Rule{Limit: 10, Window: time.Second}},
		{"10/sec", Rule{Limit: 10, Window: time.Second}},
		{"10/second", Rule{Limit: 10, Window: time.Second}},
		{"500/min", Rule{Limit: 500, Window: time.Minute}},
		{"500/minute", Rule{Limit: 500, Window: time.Minute}},
		{"500/1m", Rule{Limit: 500, Window: time.Minute}},
		{"3/1m30s", Rule{Limit: 3, Window: 90 * time.Second}},
		{"100/h", Rule{Limit: 100, Window: time.Hour}},
		{"100/hour", Rule{Limit: 100, Window: time.Hour}},
		{"10000/day", Rule{Limit: 10000, Window: 24 * time.Hour}},
		{"10000/d", Rule{Limit: 10000, Window: 24 * time.Hour}},
		{"10000/24h", Rule{Limit: 10000, Window: 24 * time.Hour}},
		{"7/2d", Rule{Limit: 7, Window: 48 * time.Hour}},
		{"2/100ms", Rule{Limit: 2, Window: 100 * time.Millisecond}},
		{" 5 / 1s ", Rule{Limit: 5, Window: time.Second}},
		{"10000/day:b96", Rule{Limit: 10000, Window: 24 * time.Hour, Buckets: 96}},
		{"10000/24h : b96", Rule{Limit: 10000, Window: 24 * time.Hour, Buckets: 96}},
		{"500/min:exact", Rule{Limit: 500, Window: time.Minute, Buckets: Exact}},
		{"500/min:EXACT", Rule{Limit: 500, Window: time.Minute, Buckets: Exact}},
		{"3/3ns:b3", Rule{Limit: 3, Window: 3, Buckets: 3}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if assert.NoError(t, err, "Parse(%q)", tt.in) {
			assert.Equal(t, tt.want, got, "Parse(%q)", tt.in)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "5", "5/", "/1s", "0/1s", "-1/1s", "5/0s", "5/-1s", "x/1s", "5/fortnight", "5/1x", "1.5/1s", "5/99999999999999999999d",
		"5/1s:", "5/1s:b", "5/1s:b0", "5/1s:b-1", "5/1s:b07", "5/1s:b65537", "5/1s:x", "5/1s:exactly", "5/1s:b2:b2", "5/3ns:b4", ":b2"} {
		r, err := Parse(in)
		assert.Error(t, err, "Parse(%q) = %v, want an error", in, r)
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, in := range []string{"5/1s", "500/1m", "10000/24h", "3/1m30s", "2/100ms", "1/1h30m", "10000/24h:b96", "500/1m:exact", "1/1s:b1"} {
		r, err := Parse(in)
		require.NoError(t, err)
		assert.Equal(t, in, r.String(), "Parse(%q).String()", in)
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("10/s,500/min,10000/day")
	require.NoError(t, err)
	assert.Equal(t, []Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 10000, Window: 24 * time.Hour}}, got)
	_, err = ParseList(" , ")
	assert.Error(t, err, "an empty list parsed")
}

func TestContractDropsTheBookkeeping(t *testing.T) {
	a, b := Rule{Limit: 5, Window: time.Second, Buckets: 4}, Rule{Limit: 5, Window: time.Second, Buckets: Exact}
	assert.NotEqual(t, a, b)
	assert.Equal(t, a.Contract(), b.Contract())
	assert.Equal(t, "5/1s", a.Contract().String())
}

func TestKeepingPolicy(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"10/s", Exact},
		{"32/s", Exact},
		{"33/s", DefaultBuckets},
		{"500/min", DefaultBuckets},
		{"10000/day", DefaultBuckets},
		{"10/s:b8", 8},
		{"10000/day:exact", Exact},
		{"100/10ns", 10}, // a bucket is at least 1 ns wide
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		require.NoError(t, err)
		assert.Equal(t, tt.want, r.Keeping(), tt.in)
	}
	r := Rule{Limit: 1, Window: 7}
	assert.Equal(t, time.Duration(3), r.BucketWidth(3), "ceil(7/3)")
	assert.Equal(t, time.Duration(2), Rule{Limit: 1, Window: 8}.BucketWidth(4))
}

func TestBoundaryWithin(t *testing.T) {
	assert.False(t, HalfOpen.Within(time.Second, time.Second), "half-open: a gap of exactly W must start a new window")
	assert.True(t, Closed.Within(time.Second, time.Second), "closed: a gap of exactly W shares the window")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"5/1s", "10/min", "10000/day", "3/1m30s", "7/2d", "0/1s", "5/-1h", "9223372036854775807/1ns", "5/106751d", "10000/24h:b96", "500/min:exact", "3/3ns:b3", "3/2ns:b3", "5/1s:b65536",
		"90000 tokens/1m", "5000/1h fixed", "10000/1d fixed at 00:00 America/New_York", "10/1s burst 20", "100/1m first-call",
		"500 tokens/1m fixed", "10000000 tokens/1d:b96", "5/1h fixed at 00:30", "5/1s fixed at 1.5ms", "3 calls/1s sliding"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		require.Positive(t, r.Limit, "Parse(%q) = %v: non-positive limit accepted", s, r)
		require.Positive(t, r.Window, "Parse(%q) = %v: non-positive window accepted", s, r)
		require.NoError(t, r.Validate(), "Parse(%q) = %v", s, r)
		back, err := Parse(r.String())
		require.NoError(t, err, "Parse(%q).String() = %q does not read back", s, r.String())
		require.Equal(t, r, back, "Parse(%q).String() = %q does not read back", s, r.String())
	})
}

func TestParseUnitsAndKinds(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		in   string
		want Rule
		text string // String(), when it differs from in
	}{
		{"90000 tokens/1m", Rule{Limit: 90000, Unit: "tokens", Window: time.Minute}, ""},
		{"500 input_tokens/1m fixed", Rule{Limit: 500, Unit: "input_tokens", Window: time.Minute, Kind: Fixed}, "500 input_tokens/1m fixed"},
		{"5000/1h fixed", Rule{Limit: 5000, Window: time.Hour, Kind: Fixed}, ""},
		{"5000/1h fixed at 00:30", Rule{Limit: 5000, Window: time.Hour, Kind: Fixed, Offset: 30 * time.Minute}, ""},
		{"5000/1h fixed at 30m", Rule{Limit: 5000, Window: time.Hour, Kind: Fixed, Offset: 30 * time.Minute}, "5000/1h fixed at 00:30"},
		{"5/1s fixed at 250ms", Rule{Limit: 5, Window: time.Second, Kind: Fixed, Offset: 250 * time.Millisecond}, ""},
		{"5/1m fixed at 00:00:15", Rule{Limit: 5, Window: time.Minute, Kind: Fixed, Offset: 15 * time.Second}, ""},
		{"10000/1d fixed at 00:00 America/New_York", Rule{Limit: 10000, Window: day, Kind: Fixed, Zone: "America/New_York"}, "10000/24h fixed at 00:00 America/New_York"},
		{"10000/day fixed at 00:00", Rule{Limit: 10000, Window: day, Kind: Fixed}, "10000/24h fixed"},
		{"10/1s burst 20", Rule{Limit: 10, Window: time.Second, Kind: Bucket, Burst: 20}, ""},
		{"2 points/1s burst 4", Rule{Limit: 2, Unit: "points", Window: time.Second, Kind: Bucket, Burst: 4}, ""},
		{"100/1m first-call", Rule{Limit: 100, Window: time.Minute, Kind: FirstCall}, ""},
		{"100/1m sliding", Rule{Limit: 100, Window: time.Minute}, "100/1m"},
		{"5 calls/1s", Rule{Limit: 5, Window: time.Second}, "5/1s"},
		{"10000000 tokens/1d:b96", Rule{Limit: 10000000, Unit: "tokens", Window: day, Buckets: 96}, "10000000 tokens/24h:b96"},
		{"7/2 days fixed", Rule{Limit: 7, Window: 2 * day, Kind: Fixed}, "7/48h fixed"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if !assert.NoError(t, err, "Parse(%q)", tt.in) {
			continue
		}
		assert.Equal(t, tt.want, got, "Parse(%q)", tt.in)
		text := tt.text
		if text == "" {
			text = tt.in
		}
		assert.Equal(t, text, got.String(), "Parse(%q).String()", tt.in)
		back, err := Parse(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, back)
	}
}

func TestParseKindErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"5/1s fixd", Forms},
		{"5/1s bucket", Forms},
		{"5/1s fixed sliding", Forms},
		{"5/1s burst", Forms},
		{"5/1s burst 0", "burst"},
		{"5/1s burst -1", "burst"},
		{"5/1s burst 2.5", "burst"},
		{"5/1s first-call 3", Forms},
		{"5/1h fixed at 01:00", "shorter than the window"},
		{"5/1h fixed at 25:00", "clock time"},
		{"5/1h fixed at 0:30", "clock time"},
		{"5/1h fixed at 00:00 America/New_York", "daily window"},
		{"5/1d fixed at 00:00 Mars/Olympus", "not an IANA zone"},
		{"5/1d fixed at 00:00 Local", "IANA zone"},
		{"5/1d fixed at 06:00 Europe/Paris", "start at 00:00"},
		{"5/1d fixed at 00:00 Europe/Paris extra", Forms},
		{"5/1s:b4 fixed", "sliding rules only"},
		{"5 Tokens/1s", "unit"},
		{"5 tokens extra/1s", "limit"},
		{"5 fixed/1s", "unit"},
		{"5/1s per key", Forms},
		{"90000tokens/1m", "a unit goes after a space (90000 tokens)"},
		{"90ktokens/1m", "a unit goes after a space (90k tokens)"},
		{"90000Tokens/1m", `limit "90000Tokens" is not a whole number`},
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		if assert.Error(t, err, "Parse(%q) = %v, want an error", tt.in, r) {
			assert.Contains(t, err.Error(), tt.want, "Parse(%q)", tt.in)
			assert.Contains(t, err.Error(), tt.in, "the error names the rule")
		}
	}
}

func TestContractKeepsUnitAndKind(t *testing.T) {
	calls, tokens := MustParse(t, "5/1s:b4"), MustParse(t, "5 tokens/1s")
	fixed, bucket := MustParse(t, "5/1s fixed"), MustParse(t, "5/1s burst 5")
	assert.Equal(t, "5/1s", calls.Contract().String())
	seen := map[Rule]bool{}
	for _, r := range []Rule{calls, tokens, fixed, bucket} {
		assert.False(t, seen[r.Contract()], "%v shares a contract with another rule", r)
		seen[r.Contract()] = true
	}
}

func MustParse(t *testing.T, s string) Rule {
	t.Helper()
	r, err := Parse(s)
	require.NoError(t, err)
	return r
}

// TestUnitWordsAreCaseExact pins down that 10/1M was read as ten a minute:
// unit words are matched case-exact, and M, months and years are refused
// with a message saying why and what to write instead.
func TestUnitWordsAreCaseExact(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"10/1M", "ambiguous"},
		{"10/M", "ambiguous"},
		{"10/1mo", "month has no fixed length"},
		{"10/month", "month has no fixed length"},
		{"10/2months", "month has no fixed length"},
		{"10/1y", "year has no fixed length"},
		{"10/1w", "7d"},
		{"10/1S", `lower case (s)`},
		{"10/Min", `lower case (min)`},
		{"10/1H", `lower case (h)`},
		{"10/2 Days", `lower case (days)`},
		{"10/DAY", `lower case (day)`},
	}
	for _, tt := range tests {
		r, err := Parse(tt.in)
		if assert.Error(t, err, "Parse(%q) = %v", tt.in, r) {
			assert.Contains(t, err.Error(), tt.want, "Parse(%q)", tt.in)
		}
	}
	// The lower-case words and Go's own units still read.
	for in, want := range map[string]time.Duration{"10/1m": time.Minute, "10/min": time.Minute, "10/1ms": time.Millisecond, "10/2 days": 48 * time.Hour, "10/1h30m": 90 * time.Minute} {
		r, err := Parse(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, r.Window, in)
		}
	}
}

// TestUnits: the units in the order the rules first name them, once each;
// call rules name none.
func TestUnits(t *testing.T) {
	rules, err := ParseList("5/1s, 100 tokens/1s, 7 points/1m, 9000 tokens/1h")
	require.NoError(t, err)
	assert.Equal(t, []string{"tokens", "points"}, Units(rules))
	assert.Empty(t, Units(rules[:1]))
}

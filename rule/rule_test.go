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
	for _, s := range []string{"5/1s", "10/min", "10000/day", "3/1m30s", "7/2d", "0/1s", "5/-1h", "9223372036854775807/1ns", "5/106751d", "10000/24h:b96", "500/min:exact", "3/3ns:b3", "3/2ns:b3", "5/1s:b65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		require.Positive(t, r.Limit, "Parse(%q) = %v: non-positive limit accepted", s, r)
		require.Positive(t, r.Window, "Parse(%q) = %v: non-positive window accepted", s, r)
		back, err := Parse(r.String())
		require.NoError(t, err, "Parse(%q).String() = %q does not read back", s, r.String())
		require.Equal(t, r, back, "Parse(%q).String() = %q does not read back", s, r.String())
	})
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

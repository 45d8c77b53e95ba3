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
		{"5/1s", Rule{5, time.Second}},
		{"12/3s", Rule{12, 3 * time.Second}},
		{"10/s", Rule{10, time.Second}},
		{"10/sec", Rule{10, time.Second}},
		{"10/second", Rule{10, time.Second}},
		{"500/min", Rule{500, time.Minute}},
		{"500/minute", Rule{500, time.Minute}},
		{"500/1m", Rule{500, time.Minute}},
		{"3/1m30s", Rule{3, 90 * time.Second}},
		{"100/h", Rule{100, time.Hour}},
		{"100/hour", Rule{100, time.Hour}},
		{"10000/day", Rule{10000, 24 * time.Hour}},
		{"10000/d", Rule{10000, 24 * time.Hour}},
		{"10000/24h", Rule{10000, 24 * time.Hour}},
		{"7/2d", Rule{7, 48 * time.Hour}},
		{"2/100ms", Rule{2, 100 * time.Millisecond}},
		{" 5 / 1s ", Rule{5, time.Second}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if assert.NoError(t, err, "Parse(%q)", tt.in) {
			assert.Equal(t, tt.want, got, "Parse(%q)", tt.in)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "5", "5/", "/1s", "0/1s", "-1/1s", "5/0s", "5/-1s", "x/1s", "5/fortnight", "5/1x", "1.5/1s", "5/99999999999999999999d"} {
		r, err := Parse(in)
		assert.Error(t, err, "Parse(%q) = %v, want an error", in, r)
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, in := range []string{"5/1s", "500/1m", "10000/24h", "3/1m30s", "2/100ms", "1/1h30m"} {
		r, err := Parse(in)
		require.NoError(t, err)
		assert.Equal(t, in, r.String(), "Parse(%q).String()", in)
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("10/s,500/min,10000/day")
	require.NoError(t, err)
	assert.Equal(t, []Rule{{10, time.Second}, {500, time.Minute}, {10000, 24 * time.Hour}}, got)
	_, err = ParseList(" , ")
	assert.Error(t, err, "an empty list parsed")
}

func TestBoundaryWithin(t *testing.T) {
	assert.False(t, HalfOpen.Within(time.Second, time.Second), "half-open: a gap of exactly W must start a new window")
	assert.True(t, Closed.Within(time.Second, time.Second), "closed: a gap of exactly W shares the window")
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"5/1s", "10/min", "10000/day", "3/1m30s", "7/2d", "0/1s", "5/-1h", "9223372036854775807/1ns", "5/106751d"} {
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

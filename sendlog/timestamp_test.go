package sendlog

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		unit Unit
		want int64
	}{
		{"3.001236", UnitAuto, 3_001_236_000},
		{"0.000007", UnitAuto, 7_000},
		{"7", UnitAuto, 7_000_000_000},
		{"1.5", UnitMillis, 1_500_000},
		{"1732945844", UnitAuto, 1_732_945_844_000_000_000},
		{"1732945844123", UnitAuto, 1_732_945_844_123_000_000},
		{"1732945844123456", UnitAuto, 1_732_945_844_123_456_000},
		{"1732945844123456789", UnitAuto, 1_732_945_844_123_456_789},
		{"1732945844123456789", UnitNanos, 1_732_945_844_123_456_789},
		{"1732945844.123456789", UnitAuto, 1_732_945_844_123_456_789},
		{"1.732945844123456789e9", UnitAuto, 1_732_945_844_123_456_789},
		{"17e-1", UnitAuto, 1_700_000_000},
		{"0.1000000000000", UnitAuto, 100_000_000},
		{"2024-11-30T04:30:00Z", UnitAuto, 1_732_941_000_000_000_000},
		{"2024-11-30T04:30:00.000000001Z", UnitAuto, 1_732_941_000_000_000_001},
		{"2024-11-30 05:30:00.5+01:00", UnitAuto, 1_732_941_000_500_000_000},
		{"9223372036854775807", UnitNanos, 9223372036854775807},
	}
	for _, tt := range tests {
		got, err := newTimeParser(tt.unit).parse([]byte(tt.in))
		if assert.NoError(t, err, "parse(%q, %v)", tt.in, tt.unit) {
			assert.Equal(t, tt.want, got, "parse(%q, %v)", tt.in, tt.unit)
		}
	}
}

func TestParseTimestampErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "missing"},
		{"-1.5", "negative"},
		{"abc", "not a timestamp"},
		{"1.2.3", "not a timestamp"},
		{"0x10", "not a timestamp"},
		{"1.0000000001", "finer than a nanosecond"},
		{"9223372036854775808", "out of range"},
		{"99999999999999999999", "out of range"},
		{"1e400", "out of range"},
		{"1e", "not a timestamp"},
		{"2024-13-01T00:00:00Z", "RFC 3339"},
		{"1969-12-31T23:59:59Z", "negative"},
		{"NaN", "not a timestamp"},
		{"Inf", "not a timestamp"},
	}
	for _, tt := range tests {
		_, err := newTimeParser(UnitNanos).parse([]byte(tt.in))
		assert.ErrorContains(t, err, tt.want, "parse(%q)", tt.in)
	}
}

func TestUnitDetectionHoldsLaterLinesToIt(t *testing.T) {
	p := newTimeParser(UnitAuto)
	_, err := p.parse([]byte("1732945844123456789"))
	require.NoError(t, err)
	assert.Contains(t, p.Detected(), "ns (detected from 19-digit")
	_, err = p.parse([]byte("1732945844123"))
	assert.ErrorContains(t, err, "set sendlog.Options.Unit", "a 13-digit integer after 19-digit ones")
}

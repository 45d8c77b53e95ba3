package plots

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHistogram(t *testing.T) {
	tests := []struct {
		name string
		runs []int64
		top  int64
		want []Bin
	}{
		{"all clean", []int64{0, 0, 0}, 0, []Bin{{0, 0, 3}}},
		{"one bin per count", []int64{0, 2, 2, 1, 2}, 3, []Bin{{0, 0, 1}, {1, 1, 1}, {2, 2, 3}, {3, 3, 0}}},
		{"wide bins past 25 values, clean runs apart", []int64{0, 1, 2, 25, 50}, 50, []Bin{
			{0, 0, 1}, {1, 3, 2}, {4, 6, 0}, {7, 9, 0}, {10, 12, 0}, {13, 15, 0}, {16, 18, 0},
			{19, 21, 0}, {22, 24, 0}, {25, 27, 1}, {28, 30, 0}, {31, 33, 0}, {34, 36, 0},
			{37, 39, 0}, {40, 42, 0}, {43, 45, 0}, {46, 48, 0}, {49, 51, 1}}},
		{"25 values, one each", []int64{24}, 24, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Histogram(tt.runs, tt.top)
			want := tt.want
			if want == nil {
				for v := range int64(25) {
					want = append(want, Bin{v, v, 0})
				}
				want[24].Runs = 1
			}
			assert.Equal(t, want, got, "Histogram(%v, %d)", tt.runs, tt.top)
			var total int64
			for _, b := range got {
				total += b.Runs
			}
			assert.Equal(t, int64(len(tt.runs)), total, "runs the bins hold")
		})
	}
}

func TestFormatting(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(999), "999"},
		{thousands(1000), "1,000"},
		{thousands(-1234567), "-1,234,567"},
		{seconds(7005011 * time.Microsecond), "7.005 s"},
		{seconds(850 * time.Millisecond), "850 ms"},
		{seconds(1500 * time.Microsecond), "1.5 ms"},
		{seconds(90 * time.Minute), "90 min"},
		{seconds(23*time.Hour + 54*time.Minute), "23.9 h"},
		{plural(1, "violation"), "1 violation"},
		{offsetLabel(6003795000), "6.003795 s"},
		{offsetLabel(7e9), "7 s"},
		{offsetLabel(1), "0.000000001 s"},
		{offsetLabel(-1500000000), "-1.5 s"},
		{plural(2, "violation"), "2 violations"},
	} {
		assert.Equal(t, tt.want, tt.got)
	}
}

func TestNiceTicks(t *testing.T) {
	labels := func(min, max float64, nt niceTicks) []string {
		var out []string
		for _, tk := range nt.Ticks(min, max) {
			out = append(out, tk.Label)
		}
		return out
	}
	for _, tt := range []struct {
		min, max float64
		nt       niceTicks
		want     []string
	}{
		{0, 7.005, niceTicks{n: 10}, []string{"0", "1", "2", "3", "4", "5", "6", "7"}},
		{0, 0.9, niceTicks{n: 5}, []string{"0.0", "0.2", "0.4", "0.6", "0.8"}},
		{0, 3, niceTicks{n: 10, integer: true}, []string{"0", "1", "2", "3"}},
		{-0.5, 3.5, niceTicks{n: 10, integer: true}, []string{"0", "1", "2", "3"}},
		{0, 30000, niceTicks{n: 3, integer: true}, []string{"0", "10,000", "20,000", "30,000"}},
	} {
		assert.Equal(t, tt.want, labels(tt.min, tt.max, tt.nt), "%v..%v", tt.min, tt.max)
	}
}

func TestWallTicksLandOnRoundInstants(t *testing.T) {
	origin := time.Date(2026, 11, 30, 4, 34, 38, 123_000_000, time.UTC).UnixNano()
	axis := newTimeAxis(origin, int64(7*time.Second))
	ticks := wallTicks{axis: axis, loc: time.UTC}.Ticks(0, 7)
	var got []string
	for _, tk := range ticks {
		got = append(got, tk.Label)
	}
	want := []string{"04:34:39", "04:34:40", "04:34:41", "04:34:42", "04:34:43", "04:34:44", "04:34:45"}
	assert.Equal(t, want, got)
	assert.InDelta(t, 0.877, ticks[0].Value, 0.001, "first tick, in s from the origin")
	// In a zone half an hour off UTC, hourly ticks still fall on the hour.
	loc := time.FixedZone("IST", 5*3600+1800)
	day := newTimeAxis(origin, int64(10*time.Hour))
	for _, tk := range (wallTicks{axis: day, loc: loc}).Ticks(0, 10) {
		assert.Regexp(t, `^\d\d:00$`, tk.Label, "hourly tick is not on the hour")
	}
}

func TestBinLabels(t *testing.T) {
	assert.Equal(t, []string{"0", "1", "2", "3"}, binLabels(Histogram(nil, 3)), "narrow")
	wide := binLabels(Histogram(nil, 2346))
	every := (len(wide) + 3) / 4
	assert.Equal(t, "0", wide[0], "wide: first label; labels %q", wide)
	assert.Empty(t, wide[1], "wide: second label; labels %q", wide)
	assert.NotEmpty(t, wide[every], "wide: label %d; labels %q", every, wide)
	named := 0
	for _, l := range wide {
		if l != "" {
			named++
		}
	}
	assert.LessOrEqual(t, named, 5, "wide: labels named: %q", wide)
}

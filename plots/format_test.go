package plots

import (
	"slices"
	"testing"
	"time"
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
			if tt.want == nil {
				if len(got) != 25 || got[24] != (Bin{24, 24, 1}) {
					t.Errorf("got %v, want 25 one-wide bins", got)
				}
			} else if !slices.Equal(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
			var total int64
			for _, b := range got {
				total += b.Runs
			}
			if total != int64(len(tt.runs)) {
				t.Errorf("bins hold %d runs, want %d", total, len(tt.runs))
			}
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
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
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
		if got := labels(tt.min, tt.max, tt.nt); !slices.Equal(got, tt.want) {
			t.Errorf("%v..%v: got %v, want %v", tt.min, tt.max, got, tt.want)
		}
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
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if v := ticks[0].Value; v < 0.876 || v > 0.878 {
		t.Errorf("first tick at %v s from the origin, want 0.877", v)
	}
	// In a zone half an hour off UTC, hourly ticks still fall on the hour.
	loc := time.FixedZone("IST", 5*3600+1800)
	day := newTimeAxis(origin, int64(10*time.Hour))
	for _, tk := range (wallTicks{axis: day, loc: loc}).Ticks(0, 10) {
		if len(tk.Label) != 5 || tk.Label[3:] != "00" {
			t.Errorf("hourly tick %q is not on the hour", tk.Label)
		}
	}
}

func TestBinLabels(t *testing.T) {
	got := binLabels(Histogram(nil, 3))
	if want := []string{"0", "1", "2", "3"}; !slices.Equal(got, want) {
		t.Errorf("narrow: got %q, want %q", got, want)
	}
	wide := binLabels(Histogram(nil, 2346))
	if every := (len(wide) + 3) / 4; wide[0] != "0" || wide[1] != "" || wide[every] == "" {
		t.Errorf("wide: %q", wide)
	}
	named := 0
	for _, l := range wide {
		if l != "" {
			named++
		}
	}
	if named > 5 {
		t.Errorf("wide: %d labels named, want at most 5: %q", named, wide)
	}
}

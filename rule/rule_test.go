package rule

import (
	"testing"
	"time"
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
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "5", "5/", "/1s", "0/1s", "-1/1s", "5/0s", "5/-1s", "x/1s", "5/fortnight", "5/1x", "1.5/1s", "5/99999999999999999999d"} {
		if r, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, r)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, in := range []string{"5/1s", "500/1m", "10000/24h", "3/1m30s", "2/100ms", "1/1h30m"} {
		r, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != in {
			t.Errorf("Parse(%q).String() = %q", in, got)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList("10/s,500/min,10000/day")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{10, time.Second}, {500, time.Minute}, {10000, 24 * time.Hour}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rule %d = %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := ParseList(" , "); err == nil {
		t.Error("an empty list parsed")
	}
}

func TestBoundaryWithin(t *testing.T) {
	if HalfOpen.Within(time.Second, time.Second) {
		t.Error("half-open: a gap of exactly W must start a new window")
	}
	if !Closed.Within(time.Second, time.Second) {
		t.Error("closed: a gap of exactly W shares the window")
	}
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
		if r.Limit <= 0 || r.Window <= 0 {
			t.Fatalf("Parse(%q) = %v: non-positive rule accepted", s, r)
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Fatalf("Parse(%q).String() = %q does not read back: %v, %v", s, r.String(), back, err)
		}
	})
}

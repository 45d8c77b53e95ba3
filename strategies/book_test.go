package strategies

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

const ms = int64(time.Millisecond)

func TestSlidingLogAtExactInstants(t *testing.T) {
	r := rule.Rule{Limit: 2, Window: time.Second}
	tests := []struct {
		name    string
		records []int64
		now     int64
		want    time.Duration
	}{
		{"empty", nil, 0, 0},
		{"one of two", []int64{0}, 0, 0},
		{"full at once", []int64{0, 0}, 0, time.Second},
		{"full, waits for the oldest", []int64{0, 300 * ms}, 500 * ms, 500 * time.Millisecond},
		{"oldest leaves exactly W later", []int64{0, 300 * ms}, 1000 * ms, 0},
		{"one ns before W still full", []int64{0, 300 * ms}, 1000*ms - 1, 1},
		{"the second oldest decides after a drop", []int64{0, 300 * ms, 1000 * ms}, 1000 * ms, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewSlidingLog(r)
			for _, at := range tt.records {
				l.Record(at)
			}
			if got := l.WaitTime(tt.now); got != tt.want {
				t.Errorf("WaitTime(%d) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

// bruteWait is the wait a sliding log must report, from every record kept:
// the least d >= 0 such that fewer than Limit records lie in
// (now+d-W, now+d].
func bruteWait(recs []int64, r rule.Rule, now int64) time.Duration {
	w := int64(r.Window)
	for _, cand := range append([]int64{now}, plusW(recs, w, now)...) {
		in := 0
		for _, x := range recs {
			if cand-x < w && x <= cand {
				in++
			}
		}
		if in < r.Limit {
			return time.Duration(cand - now)
		}
	}
	panic("unreachable")
}

// plusW lists the instants after now when some record leaves the window.
func plusW(recs []int64, w, now int64) []int64 {
	var out []int64
	for _, x := range recs {
		if x+w > now {
			out = append(out, x+w)
		}
	}
	return out // records are in order, so these are too
}

func TestSlidingLogMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		r := rule.Rule{Limit: 1 + rng.IntN(5), Window: time.Duration(1+rng.IntN(4)) * time.Second}
		l := NewSlidingLog(r)
		var recs []int64
		now := int64(0)
		for range 60 {
			// Gaps of exactly W and of zero are common on purpose.
			switch rng.IntN(4) {
			case 0:
				now += int64(r.Window)
			case 1:
			default:
				now += rng.Int64N(int64(r.Window))
			}
			want := bruteWait(recs, r, now)
			if got := l.WaitTime(now); got != want {
				t.Fatalf("trial %d: WaitTime(%d) = %v, want %v (records %v)", trial, now, got, want, recs)
			}
			if rng.IntN(3) > 0 || want == 0 {
				l.Record(now)
				recs = append(recs, now)
			}
		}
	}
}

func TestWindowCounter(t *testing.T) {
	r := rule.Rule{Limit: 4, Window: time.Second}
	c := NewWindowCounter(r)
	for range 4 {
		if w := c.WaitTime(100 * ms); w != 0 {
			t.Fatalf("room left, wait %v", w)
		}
		c.Record(100 * ms)
	}
	if w := c.WaitTime(100 * ms); w != 900*time.Millisecond {
		t.Fatalf("current window full: wait %v, want until its end (900ms)", w)
	}
	// At 1.0 s the previous window (4 calls) weighs 4*(1000-0)/1000 = 4:
	// room for one more needs 4*(1000-e)/1000 <= 3, so e >= 250 ms.
	if w := c.WaitTime(1000 * ms); w != 250*time.Millisecond {
		t.Fatalf("wait %v, want 250ms", w)
	}
	if w := c.WaitTime(1250 * ms); w != 0 {
		t.Fatalf("wait %v at 1.25 s, want 0", w)
	}
	// Two windows later the old counts are gone.
	if w := c.WaitTime(3000 * ms); w != 0 {
		t.Fatalf("wait %v, want 0", w)
	}
}

// TestWindowCounterWaitIsTight checks, against the counter's own estimate,
// that waiting what WaitTime says always leaves room, and one ns less
// never does.
func TestWindowCounterWaitIsTight(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		r := rule.Rule{Limit: 1 + rng.IntN(7), Window: time.Duration(1+rng.IntN(3)) * time.Second}
		c := NewWindowCounter(r)
		now := int64(0)
		for range 80 {
			now += rng.Int64N(int64(r.Window) / 2)
			w := c.WaitTime(now)
			if w > 0 {
				probe := *c
				if probe.WaitTime(now+int64(w)-1) == 0 {
					t.Fatalf("trial %d: admits at %d, before the %v it asked for", trial, now+int64(w)-1, w)
				}
				now += int64(w)
				if c.WaitTime(now) != 0 {
					// A window roll may ask for more; re-check as Combined does.
					continue
				}
			}
			c.Record(now)
		}
	}
}

func TestBooksLongestWaitAndBindingRule(t *testing.T) {
	b := Books{NewSlidingLog(rule.Rule{Limit: 1, Window: time.Second}), NewSlidingLog(rule.Rule{Limit: 1, Window: 3 * time.Second})}
	if w, i := b.WaitTime(0); w != 0 || i != -1 {
		t.Fatalf("empty: %v %d", w, i)
	}
	b.Record(0)
	if w, i := b.WaitTime(0); w != 3*time.Second || i != 1 {
		t.Fatalf("got %v from rule %d, want 3s from rule 1", w, i)
	}
}

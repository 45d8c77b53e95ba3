package checker

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/rule"
)

// bruteForce is the O(n²) reading of the definition: send i violates N/W
// when N or more earlier sends lie in (t_i-W, t_i] (closed: [t_i-W, t_i]),
// and a window [t, t+W) holds at most max sends.
func bruteForce(ts []int64, r rule.Rule, b rule.Boundary) (viol []int, max int) {
	w := r.Window
	for i := range ts {
		earlier := 0
		for j := 0; j < i; j++ {
			if b.Within(time.Duration(ts[i]-ts[j]), w) {
				earlier++
			}
		}
		if earlier >= r.Limit {
			viol = append(viol, i)
		}
		in := 0
		for j := i; j < len(ts); j++ {
			if b.Within(time.Duration(ts[j]-ts[i]), w) {
				in++
			}
		}
		if in > max {
			max = in
		}
	}
	return viol, max
}

// randomLog makes sorted times on a coarse grid, so equal times and gaps of
// exactly one window are common.
func randomLog(rng *rand.Rand, n int, grid int64) []int64 {
	ts := make([]int64, n)
	var t int64
	for i := range ts {
		switch rng.IntN(4) {
		case 0: // same instant as the previous send
		case 1:
			t += grid * int64(rng.IntN(3))
		default:
			t += int64(rng.IntN(int(grid) * 2))
		}
		ts[i] = t
	}
	return ts
}

func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		grid := int64(1 + rng.IntN(5))
		ts := randomLog(rng, 1+rng.IntN(60), grid)
		rules := []rule.Rule{
			{Limit: 1 + rng.IntN(6), Window: time.Duration(grid * int64(1+rng.IntN(4)))},
			{Limit: 1 + rng.IntN(12), Window: time.Duration(grid * int64(1+rng.IntN(10)))},
		}
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			var got [2][]int
			// A small MaxTrack exercises the saturated path too.
			maxTrack := 0
			if iter%3 == 0 {
				maxTrack = 1
			}
			rep, err := check(ts, Config{Rules: rules, Boundary: b, MaxTrack: maxTrack, OnViolation: func(r int, v Violation) {
				got[r] = append(got[r], int(v.Index))
			}})
			if err != nil {
				t.Fatal(err)
			}
			for k, r := range rules {
				want, wantMax := bruteForce(ts, r, b)
				rr := rep.Rules[k]
				if !slices.Equal(got[k], want) || rr.Violations != int64(len(want)) {
					t.Fatalf("%v %v on %v:\nviolations %v (count %d)\nwant       %v", r, b, ts, got[k], rr.Violations, want)
				}
				if rr.MaxSaturated {
					if rr.MaxInWindow > int64(wantMax) || rr.MaxInWindow < int64(r.Limit+1) {
						t.Fatalf("%v %v on %v: saturated max %d, true max %d", r, b, ts, rr.MaxInWindow, wantMax)
					}
				} else if rr.MaxInWindow != int64(wantMax) {
					t.Fatalf("%v %v on %v: max in window %d, want %d", r, b, ts, rr.MaxInWindow, wantMax)
				}
				if (rr.First == nil) != (len(want) == 0) || (rr.First != nil && int(rr.First.Index) != want[0]) {
					t.Fatalf("%v %v on %v: first violation %+v, want index %v", r, b, ts, rr.First, want)
				}
			}
		}
	}
}

func check(ts []int64, cfg Config) (Report, error) { return Check(ts, cfg) }

func TestExactWindowGap(t *testing.T) {
	// Sends spaced exactly W/N apart keep a half-open rule and break a
	// closed one.
	r := rule.Rule{Limit: 5, Window: time.Second}
	var ts []int64
	for i := range 20 {
		ts = append(ts, int64(i)*int64(200*time.Millisecond))
	}
	half, _ := Check(ts, Config{Rules: []rule.Rule{r}})
	closed, _ := Check(ts, Config{Rules: []rule.Rule{r}, Boundary: rule.Closed})
	if half.Rules[0].Violations != 0 {
		t.Errorf("half-open: %d violations, want 0", half.Rules[0].Violations)
	}
	if closed.Rules[0].Violations != 15 {
		t.Errorf("closed: %d violations, want 15", closed.Rules[0].Violations)
	}
}

func TestFirstViolationWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	ts := []int64{0, 100 * ms, 200 * ms, 1100 * ms, 1150 * ms}
	rep, _ := Check(ts, Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, List: 5})
	rr := rep.Rules[0]
	if rr.Violations != 2 {
		t.Fatalf("violations = %d, want 2", rr.Violations)
	}
	f := rr.First
	if f.Send.At != 200*ms || f.WindowStart.At != 0 || f.Count != 3 {
		t.Errorf("first = %+v; want the send at 200ms in a window of 3 from 0", f)
	}
	second := rr.Listed[1]
	if second.Send.At != 1150*ms || second.WindowStart.At != 200*ms || second.Count != 3 {
		t.Errorf("second = %+v; want the send at 1150ms in a window of 3 from 200ms", second)
	}
	if got := len(second.Window); got != 3 || second.Window[0].At != 200*ms {
		t.Errorf("second.Window = %+v; want the 3 sends from 200ms", second.Window)
	}
}

func TestOutOfOrder(t *testing.T) {
	c := New(Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}}})
	if err := c.Observe(10, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Observe(10, 2); err != nil {
		t.Fatalf("an equal time was refused: %v", err)
	}
	err := c.Observe(9, 3)
	if oe, ok := err.(*OrderError); !ok || oe.Prev.Ref != 2 || oe.At.Ref != 3 {
		t.Fatalf("Observe(9) = %v, want an *OrderError naming refs 2 and 3", err)
	}
}

func TestFixtures(t *testing.T) {
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}
	for _, tt := range []struct {
		file string
		want [2]int64
	}{
		{"asyncio-sequential.txt", [2]int64{2, 0}},
		{"asyncio-combined.txt", [2]int64{0, 0}},
	} {
		ts := fixtures.MustTimes(t, tt.file)
		rep, err := Check(ts, Config{Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sends != 30 {
			t.Errorf("%s: %d sends, want 30", tt.file, rep.Sends)
		}
		for k := range rules {
			if got := rep.Rules[k].Violations; got != tt.want[k] {
				t.Errorf("%s: %v has %d violations, want %d", tt.file, rules[k], got, tt.want[k])
			}
		}
	}
}

func TestObserveBatchEqualsObserve(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 500 {
		ts := randomLog(rng, 1+rng.IntN(300), int64(1+rng.IntN(4)))
		cfg := Config{
			Rules:    []rule.Rule{{Limit: 1 + rng.IntN(5), Window: time.Duration(1 + rng.IntN(20))}, {Limit: 1 + rng.IntN(30), Window: time.Duration(1 + rng.IntN(60))}},
			Boundary: rule.Boundary(rng.IntN(2)),
			List:     rng.IntN(3),
		}
		want, _ := Check(ts, cfg)
		c := New(cfg)
		refs := make([]int64, len(ts))
		for i := range refs {
			refs[i] = int64(i)
		}
		for i := 0; i < len(ts); {
			n := min(len(ts)-i, rng.IntN(50))
			if err := c.ObserveBatch(ts[i:i+n], refs[i:i+n]); err != nil {
				t.Fatal(err)
			}
			i += n
		}
		if got := c.Report(); !reflect.DeepEqual(got, want) {
			t.Fatalf("batched report differs:\n got %+v\nwant %+v", got, want)
		}
	}
	c := New(Config{Rules: []rule.Rule{{Limit: 1, Window: 5}}})
	if err := c.ObserveBatch([]int64{1, 3, 2}, []int64{0, 1, 2}); err == nil {
		t.Error("an unsorted batch was taken")
	}
}

// TestObserveBatchParallel covers batches large enough to check rules on
// separate goroutines: the report must equal the one-send-at-a-time one.
func TestObserveBatchParallel(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	ts := randomLog(rng, 5*parallelBatch, 3)
	refs := make([]int64, len(ts))
	for i := range refs {
		refs[i] = int64(i)
	}
	cfg := Config{Rules: []rule.Rule{{Limit: 3, Window: 10}, {Limit: 40, Window: 100}, {Limit: 900, Window: 3000}}, List: 2}
	want, _ := Check(ts, cfg)
	c := New(cfg)
	for i := 0; i < len(ts); i += 2 * parallelBatch {
		j := min(len(ts), i+2*parallelBatch)
		if err := c.ObserveBatch(ts[i:j], refs[i:j]); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Report(); !reflect.DeepEqual(got, want) {
		t.Fatalf("parallel batches differ:\n got %+v\nwant %+v", got.Rules, want.Rules)
	}
	if want.Rules[0].Violations == 0 {
		t.Fatal("the log should break 3/10ns somewhere")
	}
}

// TestIdleThenResume: releasing a quiet checker's memory (Idle) and going
// on must give the report of a checker that never released anything.
func TestIdleThenResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	total := 0
	for range 300 {
		// Bursts separated by gaps that are sometimes longer than every
		// window, so Idle sometimes succeeds.
		var ts []int64
		var at int64
		for range 1 + rng.IntN(8) {
			at += int64(rng.IntN(40))
			for range rng.IntN(20) {
				ts = append(ts, at)
				at += int64(rng.IntN(3))
			}
		}
		cfg := Config{
			Rules:    []rule.Rule{{Limit: 1 + rng.IntN(4), Window: time.Duration(1 + rng.IntN(10))}, {Limit: 1 + rng.IntN(8), Window: time.Duration(1 + rng.IntN(25))}},
			Boundary: rule.Boundary(rng.IntN(2)),
			List:     1,
		}
		want, _ := Check(ts, cfg)
		c := New(cfg)
		released := 0
		for i, x := range ts {
			if i > 0 && rng.IntN(2) == 0 && c.Idle(x) {
				released++
			}
			if err := c.Observe(x, int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		if got := c.Report(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d releases on %v:\n got %+v\nwant %+v", released, ts, got.Rules, want.Rules)
		}
		total += released
	}
	if total < 100 {
		t.Fatalf("only %d releases in all: the test does not exercise Idle", total)
	}
}

package plots

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

func collect(times []int64, w time.Duration, b rule.Boundary) []Step {
	var out []Step
	for s := range Occupancy(times, w, b) {
		out = append(out, s)
	}
	return out
}

func TestOccupancyAtFixedInstants(t *testing.T) {
	tests := []struct {
		name  string
		times []int64
		w     time.Duration
		b     rule.Boundary
		want  []Step
	}{
		{"empty", nil, 10, rule.HalfOpen, nil},
		{"one send", []int64{5}, 10, rule.HalfOpen, []Step{{5, 1, 0}}},
		{"ties count one by one", []int64{0, 0, 0}, 10, rule.HalfOpen,
			[]Step{{0, 1, 0}, {0, 2, 1}, {0, 3, 2}}},
		{"leaves between sends", []int64{0, 3, 20}, 10, rule.HalfOpen,
			[]Step{{0, 1, 0}, {3, 2, 1}, {10, 1, -1}, {13, 0, -1}, {20, 1, 2}}},
		{"gap of exactly W, half-open: the old send is gone", []int64{0, 10}, 10, rule.HalfOpen,
			[]Step{{0, 1, 0}, {10, 1, 1}}},
		{"gap of exactly W, closed: both count", []int64{0, 10}, 10, rule.Closed,
			[]Step{{0, 1, 0}, {10, 2, 1}}},
		{"closed: leaves one ns after W", []int64{0, 20}, 10, rule.Closed,
			[]Step{{0, 1, 0}, {11, 0, -1}, {20, 1, 1}}},
		{"tied sends leave together", []int64{0, 0, 15}, 10, rule.HalfOpen,
			[]Step{{0, 1, 0}, {0, 2, 1}, {10, 0, -1}, {15, 1, 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, collect(tt.times, tt.w, tt.b), "steps of %v, w=%d, %v", tt.times, tt.w, tt.b)
		})
	}
}

// randomTimes draws sorted send times with many ties and gaps of exactly w.
func randomTimes(rng *rand.Rand, n int, w int64) []int64 {
	times := make([]int64, n)
	var t int64
	for i := range times {
		switch rng.IntN(6) {
		case 0: // tie
		case 1:
			t += w
		case 2:
			t += w / int64(1+rng.IntN(5))
		default:
			t += rng.Int64N(w)
		}
		times[i] = t
	}
	return times
}

// bruteOccupancy counts the sends among times[:upto] in the window ending at at.
func bruteOccupancy(times []int64, upto int, at int64, w time.Duration, b rule.Boundary) int64 {
	var n int64
	for _, s := range times[:upto] {
		if s <= at && b.Within(time.Duration(at-s), w) {
			n++
		}
	}
	return n
}

// TestOccupancyMatchesBruteForce checks every step, and the instant before
// the next, against a direct count.
func TestOccupancyMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		w := time.Duration(1 + rng.IntN(50))
		b := rule.Boundary(trial % 2)
		times := randomTimes(rng, 1+rng.IntN(60), int64(w))
		steps := collect(times, w, b)
		for k, st := range steps {
			upto := len(times)
			if st.Send >= 0 {
				upto = st.Send + 1
			} else if k+1 < len(steps) {
				require.NotEqual(t, st.At, steps[k+1].At, "trial %d: expiry step at %d shares its instant with the next step", trial, st.At)
			}
			require.Equal(t, bruteOccupancy(times, upto, st.At, w, b), st.Count, "trial %d (%v, w=%d, %v): step %d %+v", trial, times, w, b, k, st)
			if k+1 < len(steps) && steps[k+1].At > st.At+1 {
				before := steps[k+1].At - 1
				require.Equal(t, bruteOccupancy(times, len(times), before, w, b), st.Count, "trial %d (%v, w=%d, %v): the line at %d", trial, times, w, b, before)
			}
		}
		require.Equal(t, len(times), countSends(steps), "trial %d: send steps for as many sends", trial)
	}
}

func countSends(steps []Step) int {
	n := 0
	for _, s := range steps {
		if s.Send >= 0 {
			n++
		}
	}
	return n
}

// TestOccupancyAgreesWithChecker: at every send the step holds what the
// checker counts, and a send is a violation exactly when it exceeds the limit.
func TestOccupancyAgreesWithChecker(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 100 {
		w := time.Duration(1 + rng.IntN(40))
		b := rule.Boundary(trial % 2)
		limit := 1 + rng.IntN(6)
		times := randomTimes(rng, 1+rng.IntN(300), int64(w))

		// A limit of 0 makes every send a violation, so the checker reports
		// the count of every window.
		counts := make([]int64, len(times))
		count := checker.Config{Rules: []rule.Rule{{Limit: 0, Window: w}}, Boundary: b,
			OnViolation: func(_ int, v checker.Violation) { counts[v.Index] = v.Count }}
		_, err := checker.Check(times, count)
		require.NoError(t, err)
		violated := make([]bool, len(times))
		judge := checker.Config{Rules: []rule.Rule{{Limit: limit, Window: w}}, Boundary: b,
			OnViolation: func(_ int, v checker.Violation) { violated[v.Index] = true }}
		_, err = checker.Check(times, judge)
		require.NoError(t, err)
		for st := range Occupancy(times, w, b) {
			if st.Send < 0 {
				continue
			}
			require.Equal(t, counts[st.Send], st.Count, "trial %d: send %d: occupancy against the checker's count", trial, st.Send)
			require.Equal(t, violated[st.Send], st.Count > int64(limit), "trial %d: send %d: occupancy %d over limit %d, against the checker's verdict", trial, st.Send, st.Count, limit)
		}
	}
}

// FuzzOccupancy checks the steps against a direct count on arbitrary logs:
// each byte is the gap to the previous send, so ties (0) and gaps of exactly
// the window come up often.
func FuzzOccupancy(f *testing.F) {
	f.Add([]byte{0, 0, 10, 0, 5, 5, 10}, uint8(10), false)
	f.Add([]byte{1, 2, 3, 4, 10, 10, 0, 0}, uint8(4), true)
	f.Fuzz(func(t *testing.T, gaps []byte, w uint8, closed bool) {
		if w == 0 || len(gaps) > 200 {
			return
		}
		b := rule.HalfOpen
		if closed {
			b = rule.Closed
		}
		times := make([]int64, len(gaps))
		var at int64
		for i, g := range gaps {
			at += int64(g)
			times[i] = at
		}
		var prev int64 = -1 << 62
		for st := range Occupancy(times, time.Duration(w), b) {
			require.GreaterOrEqual(t, st.At, prev, "steps out of time order")
			prev = st.At
			upto := len(times)
			if st.Send >= 0 {
				upto = st.Send + 1
			}
			require.Equal(t, bruteOccupancy(times, upto, st.At, time.Duration(w), b), st.Count, "%v w=%d %v: step %+v", times, w, b, st)
		}
	})
}

// TestOccupancyFromIsASuffix: starting at any send yields exactly the steps
// the full sweep yields from that send's step on.
func TestOccupancyFromIsASuffix(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		w := time.Duration(1 + rng.IntN(50))
		b := rule.Boundary(trial % 2)
		times := randomTimes(rng, 1+rng.IntN(60), int64(w))
		all := collect(times, w, b)
		for start := range len(times) + 1 {
			got := []Step{}
			for st := range OccupancyFrom(times, w, b, start) {
				if st.Send >= 0 {
					require.Equal(t, bruteOccupancy(times, st.Send+1, st.At, w, b), st.Count, "trial %d from send %d: step %+v", trial, start, st)
				}
				got = append(got, st)
			}
			k := len(all)
			for i, st := range all {
				if st.Send == start {
					k = i
					break
				}
			}
			require.Equal(t, all[k:], got, "trial %d (%v, w=%d, %v) from send %d", trial, times, w, b, start)
		}
	}
}

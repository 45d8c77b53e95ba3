package strategies

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
			assert.Equal(t, tt.want, l.WaitTime(tt.now), "WaitTime(%d)", tt.now)
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
		// Limits past 8 make the ring grow while calls come in.
		r := rule.Rule{Limit: 1 + rng.IntN(5), Window: time.Duration(1+rng.IntN(4)) * time.Second}
		if trial%3 == 0 {
			r.Limit = 1 + rng.IntN(40)
		}
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
			require.Equal(t, want, l.WaitTime(now), "trial %d: WaitTime(%d) (records %v)", trial, now, recs)
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
		require.Zero(t, c.WaitTime(100*ms), "room left")
		c.Record(100 * ms)
	}
	require.Equal(t, 900*time.Millisecond, c.WaitTime(100*ms), "current window full: wait until its end")
	// At 1.0 s the previous window (4 calls) weighs 4*(1000-0)/1000 = 4:
	// room for one more needs 4*(1000-e)/1000 <= 3, so e >= 250 ms.
	require.Equal(t, 250*time.Millisecond, c.WaitTime(1000*ms))
	require.Zero(t, c.WaitTime(1250*ms), "at 1.25 s")
	// Two windows later the old counts are gone.
	require.Zero(t, c.WaitTime(3000*ms))
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
				require.NotZero(t, probe.WaitTime(now+int64(w)-1), "trial %d: admits at %d, before the %v it asked for", trial, now+int64(w)-1, w)
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
	w, i := b.WaitTime(0)
	require.Equal(t, time.Duration(0), w, "empty")
	require.Equal(t, -1, i, "empty")
	b.Record(0)
	w, i = b.WaitTime(0)
	require.Equal(t, 3*time.Second, w)
	require.Equal(t, 1, i, "binding rule")
}

// TestSlidingLogHugeLimitCostsItsCalls pins a crash: a rule such as
// 9223372036854775807/1s made the log allocate Limit entries up front.
func TestSlidingLogHugeLimitCostsItsCalls(t *testing.T) {
	for _, limit := range []int{1<<63 - 1, 1 << 31} {
		var l *SlidingLog
		allocs := testing.AllocsPerRun(1, func() {
			l = NewSlidingLog(rule.Rule{Limit: limit, Window: time.Second})
			for i := range 100 {
				require.Zero(t, l.WaitTime(int64(i)))
				l.Record(int64(i))
			}
		})
		assert.Equal(t, 100, l.Len())
		assert.LessOrEqual(t, cap(l.at), 128, "limit %d: the ring follows the calls", limit)
		assert.Less(t, allocs, 20.0)
	}
}

// drainLogRings empties logRings and returns what they held.
func drainLogRings() []*[]int64 {
	var out []*[]int64
	for k := range logRings {
		for {
			b, ok := logRings[k].Get().(*[]int64)
			if !ok {
				break
			}
			out = append(out, b)
		}
	}
	return out
}

// TestSlidingLogRingNeverPooledWhileLive: the rings logs outgrow go to a
// pool for other logs to grow into, and never one a live log still uses.
// Logs of one rule fed in turn, with short-lived logs growing through the
// same sizes between their calls, wait as the brute force says, and the
// pool then holds no ring a live log holds, nor any twice.
func TestSlidingLogRingNeverPooledWhileLive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	reused := 0
	for trial := range 100 {
		r := rule.Rule{Limit: 20 + rng.IntN(200), Window: time.Duration(1+rng.IntN(4)) * time.Second}
		logs := []*SlidingLog{NewSlidingLog(r), NewSlidingLog(r)}
		recs := make([][]int64, len(logs))
		now := int64(0)
		for range 300 {
			now += rng.Int64N(int64(r.Window) / 50)
			for i, l := range logs {
				want := bruteWait(recs[i], r, now)
				require.Equal(t, want, l.WaitTime(now), "trial %d, log %d: WaitTime(%d)", trial, i, now)
				if want == 0 && rng.IntN(4) > 0 {
					l.Record(now)
					recs[i] = append(recs[i], now)
				}
				if rng.IntN(10) == 0 {
					other := NewSlidingLog(r)
					for k := range rng.IntN(r.Limit) {
						other.Record(int64(k))
					}
				}
			}
		}
		seen := map[*int64]bool{}
		for _, p := range drainLogRings() {
			reused++
			require.False(t, seen[&(*p)[0]], "trial %d: a ring is in the pool twice, for two logs to share", trial)
			seen[&(*p)[0]] = true
			for i, l := range logs {
				if len(l.at) > 0 {
					require.NotSame(t, &l.at[0], &(*p)[0], "trial %d: log %d's ring is in the pool", trial, i)
				}
			}
		}
	}
	require.Greater(t, reused, 100, "the pool was hardly used: the test does not exercise it")
}

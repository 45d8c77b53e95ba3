package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

func TestWorstFormulas(t *testing.T) {
	const s, m, day = time.Second, time.Minute, 24 * time.Hour
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"bucket burst N: 2N-1", bucketWorst(5, 5, s, s), 9},
		{"bucket burst 1: N", bucketWorst(1, 5, s, s), 5},
		{"bucket burst 1, 1 ns short of W", bucketWorst(1, 5, s, s+1), 6},
		{"bucket burst 1 with a margin absorbs 1 ms", bucketWorst(1, 5, s+5*time.Millisecond, s+3*time.Millisecond), 5},
		{"bucket burst 2 for 500/min: 501", bucketWorst(2, 500, m, m), 501},
		{"bucket burst 2 for 10000/day: 10001", bucketWorst(2, 10000, day, day), 10001},
		{"daily bucket bounds a minute", bucketWorst(1, 10000, day, m), 7},
		{"bucket, no overflow on a year", bucketWorst(1<<30, 1<<30, s, 365*day), (1<<30)*(1+365*86400) - 2},
		{"fixed across one edge: 2N", fixedWorst(5, s, s), 10},
		{"fixed, half", fixedWorst(2, s, s), 4},
		{"fixed, a minute of seconds", fixedWorst(5, s, m), 305},
		{"fixed, one window within", fixedWorst(5, s, 1), 5},
		{"fixed, 1 ns past a window", fixedWorst(5, s, s+2), 15},
		{"log: N", logWorst(5, s, s), 5},
		{"log, 1 ns past its window", logWorst(5, s, s+1), 10},
		{"log with margin", logWorst(5, s+time.Millisecond, s+time.Millisecond), 5},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got, tt.name)
	}
}

// maxInWindow is the most of the sorted instants in any [x, x+w).
func maxInWindow(ts []int64, w int64) int64 {
	var best int64
	j := 0
	for i := range ts {
		for ts[i]-ts[j] >= w {
			j++
		}
		best = max(best, int64(i-j+1))
	}
	return best
}

// TestBucketWorstBruteForce runs a token bucket greedily on every
// nanosecond, in integer units (a token is per units, per ns adds limit),
// and compares the fullest window with bucketWorst.
func TestBucketWorstBruteForce(t *testing.T) {
	for burst := int64(1); burst <= 4; burst++ {
		for limit := int64(1); limit <= 4; limit++ {
			for per := limit; per <= 12; per++ {
				var ts []int64
				level := burst * per
				for now := int64(0); now < 80; now++ {
					if now > 0 {
						level = min(burst*per, level+limit)
					}
					for level >= per {
						ts = append(ts, now)
						level -= per
					}
				}
				for w := int64(1); w <= 30; w++ {
					got := bucketWorst(burst, limit, time.Duration(per), time.Duration(w))
					if per%limit == 0 {
						require.Equal(t, maxInWindow(ts, w), got, "burst %d, %d per %d ns, window %d ns", burst, limit, per, w)
						continue
					}
					// Tokens due between two whole nanoseconds may overflow
					// a full bucket there: the formula is then an upper bound.
					require.GreaterOrEqual(t, got, maxInWindow(ts, w), "burst %d, %d per %d ns, window %d ns", burst, limit, per, w)
				}
			}
		}
	}
}

// TestFixedWorstBruteForce places limit calls at every instant of each
// fixed window that lies inside [x, x+t), over every offset x, for aligned
// windows and for first-hit windows opened as soon as the last closed or
// one ns to several later.
func TestFixedWorstBruteForce(t *testing.T) {
	for per := int64(1); per <= 9; per++ {
		for gap := int64(0); gap <= 3; gap++ {
			var starts []int64
			for s := int64(0); s < 100; s += per + gap*((s/per)%2) {
				starts = append(starts, s)
			}
			for w := int64(1); w <= 25; w++ {
				var best int64
				for x := int64(0); x < 50; x++ {
					var n int64
					for _, s := range starts {
						if s <= x+w-1 && s+per-1 >= x {
							n += 3
						}
					}
					best = max(best, n)
				}
				got := fixedWorst(3, time.Duration(per), time.Duration(w))
				assert.GreaterOrEqual(t, got, best, "per %d gap %d window %d", per, gap, w)
				if gap == 0 {
					assert.Equal(t, best, got, "aligned: per %d window %d", per, w)
				}
			}
		}
	}
}

// TestLogWorstBruteForce runs a sliding log greedily on every nanosecond.
func TestLogWorstBruteForce(t *testing.T) {
	for limit := int64(1); limit <= 4; limit++ {
		for per := int64(1); per <= 10; per++ {
			var ts []int64
			for now := int64(0); now < 80; now++ {
				for {
					n := int64(0)
					for _, s := range ts {
						if now-s < per {
							n++
						}
					}
					if n >= limit {
						break
					}
					ts = append(ts, now)
				}
			}
			for w := int64(1); w <= 30; w++ {
				require.Equal(t, maxInWindow(ts, w), logWorst(limit, time.Duration(per), time.Duration(w)),
					"%d per %d ns, window %d", limit, per, w)
			}
		}
	}
}

// TestBounds: each design's analytic worst case for the settings the
// issue names and the ones the audit suggests.
func TestBounds(t *testing.T) {
	opt := DefaultOptions(mustRules(t, "10/s,500/min,10000/day"))
	one := libs.Config{Burst: 1, Margin: 5 * time.Millisecond}
	tests := []struct {
		name string
		cfg  libs.Config
		want []int64
	}{
		// The daily bucket's burst of 2 lets 10001 into a day.
		{catalog.XRateChained, libs.Config{Burst: 2, Margin: 5 * time.Millisecond}, []int64{2, 8, 10001}},
		// Burst 1: the daily bucket binds the shorter rules.
		{catalog.XRateChained, one, []int64{1, 7, 10000}},
		// Lateness 3 ms is more than a 1 ms margin: one more a day.
		{catalog.XRateChained, libs.Config{Burst: 1, Margin: time.Millisecond}, []int64{1, 7, 10001}},
		// One model of delay: a reply handled up to 3 ms late is a sleep's
		// lateness, so redis_rate needs the same margin.
		{catalog.RedisRate, libs.Config{Burst: 1, Margin: time.Millisecond}, []int64{1, 7, 10001}},
		{catalog.RedisRate, one, []int64{1, 7, 10000}},
		{catalog.UberRatelimit, libs.Config{Slack: 10, Margin: 5 * time.Millisecond}, []int64{11, 17, 10010}},
		// Chained fixed windows: the callers that waited for the next day
		// all go at its start, whatever the shorter rules say: the daily
		// limiter's 5000 (chainWindowsWorst), not 2·5000.
		{catalog.FixedWindow, libs.Config{Half: true, Margin: 5 * time.Millisecond}, []int64{5000, 5000, 10000}},
		{catalog.FixedWindow, libs.Config{}, []int64{10000, 10000, 30000}},
		{catalog.UluleRedis, libs.Config{Half: true, Margin: 5 * time.Millisecond}, []int64{5000, 5000, 10000}},
		{catalog.UluleRedis, libs.Config{Half: true, Margin: time.Millisecond}, []int64{5000, 5000, 15000}},
		// Worker clocks 5 ms apart, and the op costs after the script.
		{catalog.RedisClientTime, libs.Config{Margin: 10 * time.Millisecond}, []int64{10, 500, 10000}},
		{catalog.RedisClientTime, libs.Config{Margin: 5 * time.Millisecond}, []int64{20, 510, 10010}},
		{catalog.TwoTrips, one, []int64{Unbounded, Unbounded, Unbounded}},
	}
	for _, tt := range tests {
		bs := boundsOf(mustDesign(t, tt.name), tt.cfg, &opt)
		got := make([]int64, len(bs))
		for i, b := range bs {
			got[i] = b.Worst
		}
		assert.Equal(t, tt.want, got, "%s %+v", tt.name, tt.cfg)
	}
	// One rule: half the limit, and a margin for the delay between the
	// INCR and the send (and PEXPIRE's millisecond for ulule).
	one10 := DefaultOptions(mustRules(t, "10/s"))
	for _, tt := range []struct {
		name string
		cfg  libs.Config
		want int64
	}{
		{catalog.FixedWindow, libs.Config{Half: true}, 15},
		{catalog.FixedWindow, libs.Config{Half: true, Margin: time.Millisecond}, 15},
		{catalog.FixedWindow, libs.Config{Half: true, Margin: 4 * time.Millisecond}, 10},
		{catalog.UluleRedis, libs.Config{Half: true, Margin: 4 * time.Millisecond}, 15},
		{catalog.UluleRedis, libs.Config{Half: true, Margin: 5 * time.Millisecond}, 10},
		{catalog.UluleRedis, libs.Config{Margin: 5 * time.Millisecond}, 20},
	} {
		assert.Equal(t, tt.want, boundsOf(mustDesign(t, tt.name), tt.cfg, &one10)[0].Worst, "10/s: %s %+v", tt.name, tt.cfg)
	}
	opt.Lateness = workload.Dist{Kind: workload.LogNormal, A: time.Millisecond, Sigma: 1}
	assert.Equal(t, int64(Unbounded), boundsOf(mustDesign(t, catalog.XRateChained), one, &opt)[0].Worst, "unbounded lateness")
}

// TestUnexercisedIsNotSafe is #33.10: `rlcheck audit --rules 10/s,500/min
// --strategies xrate-chained,redis-rate --seeds 1 --verify 1` never filled
// the minute window (30/500 at most) and still suggested burst 2, whose
// buckets admit 501 in some minute. Every suggestion must now have each
// rule reached on some workload or proved by its analytic worst case, and
// never a setting whose analytic worst case is over a limit.
func TestUnexercisedIsNotSafe(t *testing.T) {
	rep, opt := audited(t, "10/s,500/min", 1, catalog.XRateChained, catalog.RedisRate)
	for _, sa := range rep.Strategies {
		require.NotNil(t, sa.Safe, "%s: a safe setting", sa.Name)
		require.Len(t, sa.SafeVerdicts, 2, sa.Name)
		assert.True(t, analyticSafe(boundsOf(sa.design, *sa.Safe, &opt)), "%s %s: analytic worst within the limits", sa.Name, settingWords(sa.design, *sa.Safe))
		assert.NotContains(t, code(sa.design, *sa.Safe, opt.Rules), "500/60.0), 2)", sa.Name)
		for _, v := range sa.SafeVerdicts {
			assert.Contains(t, []string{Reached, AtBound, Proved}, v.Status, "%s %v: %+v", sa.Name, v.Rule, v)
			assert.LessOrEqual(t, v.Measured, v.Worst, "%s %v: measured within analytic", sa.Name, v.Rule)
		}
		// The minute rule was driven close to its limit, not left at 30.
		assert.GreaterOrEqual(t, sa.SafeVerdicts[1].Measured, int64(450), "%s: most sends in one minute", sa.Name)
	}
}

// TestVerdict covers each status.
func TestVerdict(t *testing.T) {
	r := rule.Rule{Limit: 10, Window: time.Second}
	tests := []struct {
		measured, worst int64
		want            string
	}{
		{10, 10, Reached},
		{9, 9, AtBound},
		{8, 10, Proved},
		{9, Unbounded, NotExercised},
		{10, Unbounded, Exceeds},
		{10, 11, Exceeds},
		{11, 10, Disagrees},
	}
	for _, tt := range tests {
		o := []Outcome{{Rules: []RuleOutcome{{Rule: r, MaxInWindow: tt.measured}}}}
		v := verdict(o, []Bound{{Rule: r, Worst: tt.worst, By: 0}})
		assert.Equal(t, tt.want, v[0].Status, fmt.Sprintf("measured %d, worst %d", tt.measured, tt.worst))
		assert.Equal(t, tt.want == Reached || tt.want == AtBound || tt.want == Proved, allSafe(v), "safe: measured %d, worst %d", tt.measured, tt.worst)
	}
}

// admitsLogs reports whether a call at now fits every log (n per per ns)
// beside the calls ts already admitted.
func admitsLogs(ts []int64, now int64, logs [][2]int64) bool {
	for _, l := range logs {
		n := int64(0)
		for _, s := range ts {
			if now-s < l[1] {
				n++
			}
		}
		if n >= l[0] {
			return false
		}
	}
	return true
}

// TestLogsWorstBruteForce runs sliding logs that judge each call together,
// greedily on every nanosecond (every call as early as all allow), and on
// random schedules they admit: the greedy schedule's fullest window of w
// is logsWorst's, and no random one's is more.
func TestLogsWorstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cases := 0
	for n1 := int64(1); n1 <= 3; n1++ {
		for p1 := int64(1); p1 <= 4; p1++ {
			for n2 := n1 + 1; n2 <= 7; n2++ {
				for p2 := p1 + 1; p2 <= 13; p2++ {
					logs := [][2]int64{{n1, p1}, {n2, p2}}
					if p2 > 2*p1 && n2 < 6 {
						logs = append(logs, [2]int64{n2 + 3, 2*p2 + 1})
					}
					pieces := make([]logPiece, len(logs))
					for i, l := range logs {
						pieces[i] = logPiece{n: l[0], per: time.Duration(l[1]), rule: i}
					}
					var greedy []int64
					for now := int64(0); now < 60; now++ {
						for admitsLogs(greedy, now, logs) {
							greedy = append(greedy, now)
						}
					}
					var random []int64
					for now := int64(0); now < 60; now++ {
						for rng.IntN(3) > 0 && admitsLogs(random, now, logs) {
							random = append(random, now)
						}
					}
					for w := int64(1); w <= 30; w++ {
						got, by := logsWorst(pieces, time.Duration(w))
						require.Equal(t, maxInWindow(greedy, w), got, "logs %v, window %d", logs, w)
						require.LessOrEqual(t, maxInWindow(random, w), got, "logs %v, window %d", logs, w)
						require.True(t, by >= 0 && by < len(logs))
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d windows", cases)
}

// TestLogsWorst: the joint bound of the logs the audit knows.
func TestLogsWorst(t *testing.T) {
	const s, m, day = time.Second, time.Minute, 24 * time.Hour
	three := []logPiece{{10, s, 0}, {500, m, 1}, {10000, day, 2}}
	d := 3*time.Millisecond + 30*time.Microsecond
	for _, tt := range []struct {
		t    time.Duration
		want int64
		by   int
	}{
		{s, 10, 0}, {s + d, 20, 0}, {m, 500, 1}, {m + d, 510, 1}, {m + s, 510, 1},
		{m + s + 1, 520, 1}, {day, 10000, 2}, {day + d, 10010, 2}, {2 * m, 1000, 1},
	} {
		got, by := logsWorst(three, tt.t)
		assert.Equal(t, tt.want, got, "window %v", tt.t)
		assert.Equal(t, tt.by, by, "window %v: binding log", tt.t)
	}
	got, _ := logsWorst([]logPiece{{1 << 40, s, 0}, {1 << 40, 2 * s, 1}}, 1<<62)
	assert.Equal(t, int64(math.MaxInt64), got, "clamped, never wrapped")
}

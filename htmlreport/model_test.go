package htmlreport

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/rule"
)

func undelta(d []int64) []int64 {
	out := make([]int64, len(d))
	var v int64
	for i, x := range d {
		v += x
		out[i] = v
	}
	return out
}

// TestChunksAreExact: the detail inlined for zooming is, for every rule,
// exactly the full sweep's steps within the chunk and exactly the checker's
// violations there, whether the timeline is inlined whole or in excerpts
// around its first violations; and excerpts stay within their bound.
func TestChunksAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rules := []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 40, Window: 5 * time.Second}}
	for _, n := range []int{500, FullDetail + 5000} {
		for _, b := range []rule.Boundary{rule.HalfOpen, rule.Closed} {
			times := make([]int64, n)
			t0 := int64(1767225600_000_000_000)
			for i := range times {
				// Bursts and ties, with gaps of exactly a window among them.
				switch rng.IntN(20) {
				case 0:
				case 1:
					t0 += int64(time.Second)
				default:
					t0 += rng.Int64N(int64(150 * time.Millisecond))
				}
				times[i] = t0
			}
			p, err := build(timeline{name: "x", times: times, rules: rules, boundary: b, where: func(int64) string { return "" }})
			require.NoError(t, err)
			from := times[0]
			if n <= FullDetail {
				require.Len(t, p.Chunks, 1, "a short timeline is inlined whole")
			} else {
				require.NotEmpty(t, p.Chunks)
				require.Less(t, p.Chunks[len(p.Chunks)-1].B, times[n-1]-from, "excerpts, not the whole timeline")
				assert.LessOrEqual(t, len(p.Chunks), len(rules)*DetailViolations)
			}
			var viol [][]int64
			viol = make([][]int64, len(rules))
			_, err = checker.Check(times, checker.Config{Rules: rules, Boundary: b, OnViolation: func(r int, v checker.Violation) {
				viol[r] = append(viol[r], v.Send.At-from)
			}})
			require.NoError(t, err)
			sends := 0
			for _, c := range p.Chunks {
				for r, ru := range rules {
					var wantX, wantY []int64
					for st := range plots.Occupancy(times, ru.Window, b) {
						if st.At >= c.A+from && st.At <= c.B+from {
							wantX, wantY = append(wantX, st.At-from), append(wantY, st.Count)
						}
					}
					assert.Equal(t, wantX, undelta(c.Rule[r].XD), "n %d %v rule %s chunk %d..%d: instants", n, b, ru, c.A, c.B)
					assert.Equal(t, wantY, undelta(c.Rule[r].YD), "n %d %v rule %s: counts", n, b, ru)
					var wantM []int64
					for _, at := range viol[r] {
						if at >= c.A && at <= c.B {
							wantM = append(wantM, at)
						}
					}
					assert.Equal(t, len(wantM), len(c.Rule[r].MY), "n %d %v rule %s: violations", n, b, ru)
					if len(wantM) > 0 {
						assert.Equal(t, wantM, undelta(c.Rule[r].MXD), "n %d %v rule %s: violation instants", n, b, ru)
					}
				}
				for _, at := range times {
					if at-from >= c.A && at-from <= c.B {
						sends++
					}
				}
			}
			if n > FullDetail {
				assert.LessOrEqual(t, sends, len(rules)*DetailViolations*(2*DetailAround+1), "excerpts stay bounded")
			}
		}
	}
}

// TestBuildAtExtremes: a report's panel is built, and agrees with the
// checker, for sends at the ends of the int64 range, a single send, equal
// instants and spans of 1 ns and 292 years; sends spanning more than an
// int64 of nanoseconds are refused with the span named, not drawn wrapped.
func TestBuildAtExtremes(t *testing.T) {
	const year = int64(365 * 24 * time.Hour)
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 2, Window: 24 * time.Hour}}
	for _, tt := range []struct {
		name  string
		times []int64
	}{
		{"the issue's, 0.8 s before the int64 end", []int64{9223372036_000_000_000, 9223372036_800_000_000}},
		{"int64 max", []int64{math.MaxInt64, math.MaxInt64}},
		{"int64 min", []int64{math.MinInt64, math.MinInt64 + 1}},
		{"a single send", []int64{1767225600_000_000_000}},
		{"all equal", []int64{5, 5, 5, 5}},
		{"a span of 1 ns", []int64{7, 8}},
		{"292 years up to int64 max", []int64{math.MaxInt64 - 292*year, math.MaxInt64 - 1, math.MaxInt64}},
	} {
		var pn *panel
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			pn, err = build(timeline{name: tt.name, times: tt.times, rules: rules, wall: tt.times[0] > 0, where: func(int64) string { return "" }})
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			panic(tt.name + ": build still running after a minute: it loops")
		}
		require.NoError(t, err, tt.name)
		rep, err := checker.Check(tt.times, checker.Config{Rules: rules})
		require.NoError(t, err, tt.name)
		for i, rr := range rep.Rules {
			assert.Equal(t, rr.Violations, pn.Rules[i].Violations, "%s, %v: violations", tt.name, rules[i])
			assert.Equal(t, rr.MaxInWindow, pn.Rules[i].Peak, "%s, %v: peak", tt.name, rules[i])
		}
	}
	_, err := build(timeline{name: "all sends", times: []int64{math.MinInt64, math.MaxInt64}, rules: rules, where: func(int64) string { return "" }})
	assert.ErrorContains(t, err, "the sends span -9223372036854775808 ns to 9223372036854775807 ns, more than the 292 years a report can draw")
}

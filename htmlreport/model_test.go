package htmlreport

import (
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

package plots

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// benchRules are a day-long log's rules: the bursts break the first two,
// and the busiest hours the third.
var benchRules = []rule.Rule{
	{Limit: 150, Window: time.Second},
	{Limit: 7200, Window: time.Minute},
	{Limit: 418_000, Window: time.Hour},
}

// dayRule is a daily cap in the millions: the checker then keeps millions of
// sends in its ring, which the DayRule benchmark measures.
var dayRule = rule.Rule{Limit: 9_990_000, Window: 24 * time.Hour}

// benchLog generates n sends, about 116 a second (10M in a day), with a
// burst of 200 tied sends every 100k sends; the same n gives the same log.
func benchLog(n int) []int64 {
	rng := rand.New(rand.NewPCG(2026, 11))
	times := make([]int64, n)
	t := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range times {
		if i%100000 >= 200 {
			t += rng.Int64N(int64(17280 * time.Microsecond))
		}
		times[i] = t
	}
	return times
}

// BenchmarkTimeline10M plots a 10-million-send log with three rules:
// go test ./plots -run '^$' -bench Timeline10M -benchtime 1x
func BenchmarkTimeline10M(b *testing.B) {
	times := benchLog(10_000_000)
	for _, ext := range []string{".png", ".svg"} {
		b.Run(ext[1:], func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "timeline"+ext)
			in := TimelineInput{Title: "10M sends", Times: times, Rules: benchRules, WallClock: true}
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				require.NoError(b, Timeline(path, in))
			}
			st, err := os.Stat(path)
			require.NoError(b, err)
			b.ReportMetric(float64(st.Size()), "file-bytes")
			b.ReportMetric(float64(len(times))*float64(b.N)/b.Elapsed().Seconds(), "sends/s")
		})
	}
}

// BenchmarkTimeline10MDayRule adds a 9,990,000/24h rule to the same log.
func BenchmarkTimeline10MDayRule(b *testing.B) {
	times := benchLog(10_000_000)
	path := filepath.Join(b.TempDir(), "timeline.png")
	in := TimelineInput{Times: times, Rules: append(benchRules[:3:3], dayRule), WallClock: true}
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		require.NoError(b, Timeline(path, in))
	}
}

// BenchmarkTimelineSeries10M times the computation alone, without drawing.
func BenchmarkTimelineSeries10M(b *testing.B) {
	times := benchLog(10_000_000)
	in := TimelineInput{Times: times, Rules: benchRules}
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		_, err := TimelineSeries(in, 960)
		require.NoError(b, err)
	}
}

// reportCPU adds the CPU time per run (every core, garbage collection
// included) since start: wall time alone misleads on a busy machine.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
}

package simulate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// TestExecResultIsTheGoResult: an adapter that answers the very
// admissions a Go strategy made gets the Go strategy's row: the same
// sends at the provider, verdicts and fullest windows, with and without a
// send path.
func TestExecResultIsTheGoResult(t *testing.T) {
	for _, delay := range []string{"0", "uniform(0, 2ms)"} {
		s := seedScenario(&testing.B{})
		d, err := workload.ParseDist(delay)
		require.NoError(t, err)
		s.SendDelay = []workload.Dist{d}
		for _, name := range []string{"sequential", "combined"} {
			st, _ := catalog.Lookup(name)
			for seed := uint64(1); seed <= 30; seed++ {
				goRes, err := RunStrategy(s, st, seed, Options{})
				require.NoError(t, err)
				run := adapter.NewRun(s, name, seed)
				admitted := goRes.Admissions
				if admitted == nil {
					admitted = goRes.Sends
				}
				ans := &adapter.Answer{Calls: make([]adapter.Result, len(run.Calls))}
				for i, at := range admitted { // every caller arrives at 0: any may take any instant
					ans.Calls[i] = adapter.Result{Outcome: adapter.Sent, SendNS: at}
				}
				got, err := execResult(s, run, ans)
				require.NoError(t, err)
				assert.Equal(t, goRes.Sends, got.Sends, "%s seed %d delay %s", name, seed, delay)
				assert.Equal(t, goRes.Duration, got.Duration)
				assert.Equal(t, goRes.PathSpread, got.PathSpread)
				for k := range s.Rules {
					assert.Equal(t, goRes.Rules[k].Violations, got.Rules[k].Violations)
					assert.Equal(t, goRes.Rules[k].RecordViolations, got.Rules[k].RecordViolations)
					assert.Equal(t, goRes.Rules[k].MaxInWindow, got.Rules[k].MaxInWindow)
				}
			}
		}
	}
}

// TestMostAtOnce against counting every instant that matters.
func TestMostAtOnce(t *testing.T) {
	cases := [][][2]int64{
		nil,
		{{5, 5}},
		{{5, 5}, {5, 5}},
		{{0, 10}, {10, 20}},
		{{0, 10}, {5, 5}, {9, 12}},
		{{0, 10}, {10, 10}},
		{{3, 3}, {0, 3}, {3, 7}},
	}
	for _, spans := range cases {
		want := 0
		// At each span's start: the spans open then, and the probe itself
		// when it is of zero length.
		for p, probe := range spans {
			n := 0
			for i, sp := range spans {
				if (sp[0] <= probe[0] && probe[0] < sp[1]) || i == p {
					n++
				}
			}
			want = max(want, n)
		}
		assert.Equal(t, want, mostAtOnce(spans), "%v", spans)
	}
}

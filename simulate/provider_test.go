package simulate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

const msec = time.Millisecond

// twoWorkers: combined admits worker 0's call at 0 and worker 1's at 100 ms
// under 1/100ms; worker 0's request takes 30 ms to the provider and worker
// 1's none, so the provider sees them 70 ms apart.
func twoWorkers(margin time.Duration) *workload.Scenario {
	return &workload.Scenario{
		Name: "edge", Rules: []rule.Rule{{Limit: 1, Window: 100 * msec}}, Strategies: []string{"combined"},
		Callers: 2, Workers: 2, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce},
		SendDelay: []workload.Dist{{A: 30 * msec}, {}}, Margin: margin,
	}
}

func TestProviderAndRecordViews(t *testing.T) {
	tests := []struct {
		name               string
		margin             time.Duration
		sends, admissions  []int64
		atProvider, inRecs int64
	}{
		{"no margin: exact at the limiter, one too many at the provider", 0,
			[]int64{int64(30 * msec), int64(100 * msec)}, []int64{0, int64(100 * msec)}, 1, 0},
		{"a margin short of the spread by 1 ns", 30*msec - 1,
			[]int64{int64(30 * msec), int64(130*msec - 1)}, []int64{0, int64(130*msec - 1)}, 1, 0},
		{"a margin of the spread (30 ms - 0) keeps the provider's window", 30 * msec,
			[]int64{int64(30 * msec), int64(130 * msec)}, []int64{0, int64(130 * msec)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(twoWorkers(tt.margin), Options{})
			require.NoError(t, err)
			require.True(t, res.SendPath)
			st := res.Strategies[0]
			assert.Equal(t, tt.sends, st.Sends, "arrivals at the provider")
			assert.Equal(t, tt.admissions, st.Admissions)
			assert.Equal(t, tt.atProvider, st.Rules[0].Violations)
			assert.Equal(t, tt.inRecs, st.Rules[0].RecordViolations)
			assert.Equal(t, 30*msec, st.PathSpread)
			assert.True(t, res.ShowRecords())
		})
	}
}

func TestNoSendPathKeepsOneView(t *testing.T) {
	s := twoWorkers(0)
	s.SendDelay = nil
	res, err := Run(s, Options{})
	require.NoError(t, err)
	st := res.Strategies[0]
	assert.False(t, res.SendPath)
	assert.Nil(t, st.Admissions, "admissions are the sends")
	assert.Equal(t, []int64{0, int64(100 * msec)}, st.Sends)
	assert.Equal(t, st.Rules[0].Violations, st.Rules[0].RecordViolations)
	assert.False(t, res.ShowRecords())
}

// TestRedisRoundTrip: the script runs at the end of the request leg, where
// the call is recorded, and the caller sends after the reply leg.
func TestRedisRoundTrip(t *testing.T) {
	s := &workload.Scenario{
		Name: "rtt", Rules: []rule.Rule{{Limit: 1, Window: time.Second}}, Strategies: []string{"redis"},
		Callers: 2, Workers: 1, Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, RedisRTT: workload.Dist{A: 2 * msec},
	}
	res, err := Run(s, Options{})
	require.NoError(t, err)
	st := res.Strategies[0]
	require.Len(t, st.Sends, 2)
	assert.Equal(t, int64(msec), st.Admissions[0], "recorded when the request reaches Redis")
	assert.Equal(t, int64(2*msec), st.Sends[0], "sent when the reply is back")
	assert.GreaterOrEqual(t, st.Admissions[1], int64(time.Second+msec))
	assert.Equal(t, int64(msec), st.Sends[1]-st.Admissions[1])
	assert.Zero(t, st.Violations())
	assert.Zero(t, st.RecordViolations())
}

func TestSendDelayPerWorkerMustMatchWorkers(t *testing.T) {
	s := twoWorkers(0)
	s.SendDelay = []workload.Dist{{}, {}, {}}
	require.ErrorContains(t, s.Validate(), "3 send delays for 2 workers")
	s.SendDelay, s.Margin = nil, -1
	require.ErrorContains(t, s.Validate(), "margin must not be negative")
}

// TestMarginOfTheSpreadKeepsTheProvider is the margin argument as a
// property: with every path delay in [a, b], the check-every-rule
// strategies never violate at the provider with a margin of b - a, while
// with none some seed does.
func TestMarginOfTheSpreadKeepsTheProvider(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range []string{"combined", "gated", "redis"} {
		st, _ := catalog.Lookup(name)
		t.Run(name, func(t *testing.T) {
			someViolate := false
			cases, seeds := 12, 5
			if st.NeedsRedis {
				cases, seeds = 3, 2 // each script runs in an embedded Redis
			}
			for c := range cases {
				a := time.Duration(rng.Int64N(int64(20 * msec)))
				b := a + time.Duration(1+rng.Int64N(int64(30*msec)))
				workers := 1 + rng.IntN(4)
				delays := make([]workload.Dist, workers)
				for w := range delays {
					// Each worker draws within [a, b], some from a narrower part.
					lo := a + time.Duration(rng.Int64N(int64(b-a)/2+1))
					delays[w] = workload.Dist{Kind: workload.Uniform, A: lo, B: b}
				}
				delays[0].A = a
				s := &workload.Scenario{
					Name:       "prop",
					Rules:      []rule.Rule{{Limit: 1 + rng.IntN(5), Window: time.Duration(50+rng.IntN(500)) * msec}, {Limit: 8 + rng.IntN(10), Window: 2 * time.Second}},
					Strategies: []string{name}, Callers: 40, Workers: workers, MaxInFlight: 3,
					Arrivals: workload.Arrivals{Kind: workload.Poisson, Rate: 30}, Lateness: workload.Dist{Kind: workload.Uniform, B: 2 * msec},
					CallDuration: workload.Dist{Kind: workload.Exponential, A: 20 * msec}, SendDelay: delays, Seed: uint64(c),
				}
				for _, m := range []time.Duration{0, b - a} {
					s.Margin = m
					rs, err := RunSeeds(s, seeds, Options{})
					require.NoError(t, err)
					sr := rs.Strategies[0]
					assert.Zero(t, sr.RunsWithRecordViolations, "case %d: exact on its admissions", c)
					if m > 0 {
						assert.Zero(t, sr.RunsWithViolations, fmt.Sprintf("case %d: margin %v = b - a, rules %v", c, m, s.Rules))
					} else if sr.RunsWithViolations > 0 {
						someViolate = true
					}
				}
			}
			assert.True(t, someViolate, "with no margin, some seed violates at the provider")
		})
	}
}

func TestFindMarginBisectsToTheSpread(t *testing.T) {
	r, err := FindMargins(twoWorkers(0), MarginOptions{Runs: 3, Resolution: msec})
	require.NoError(t, err)
	sm := r.Strategies[0]
	assert.Equal(t, 3, sm.ViolatingAtZero)
	assert.True(t, sm.Found)
	assert.False(t, sm.Observed, "fixed delays are bounded")
	assert.Equal(t, 30*msec, sm.Bound)
	assert.Equal(t, 30*msec, sm.Margin, "29 ms still violates; 30 ms does not")
	assert.Equal(t, RunCost{Duration: 70 * msec, Sends: 2}, sm.Zero, "arrivals at 30 and 100 ms")
	assert.Equal(t, RunCost{Duration: 100 * msec, Sends: 2}, sm.AtMargin, "arrivals at 30 and 130 ms")
}

// TestMetricsCarryBothViews: with a send path the registry counts the
// violations among the admissions beside those at the provider; without
// one it holds the series it always did.
func TestMetricsCarryBothViews(t *testing.T) {
	for _, tt := range []struct {
		delays  []workload.Dist
		records bool
	}{{[]workload.Dist{{A: 30 * msec}, {}}, true}, {nil, false}} {
		s := twoWorkers(0)
		s.SendDelay = tt.delays
		res, err := Run(s, Options{})
		require.NoError(t, err)
		fams, err := MetricsRegistry(res).Gather()
		require.NoError(t, err)
		got := map[string]float64{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				if c := m.GetCounter(); c != nil {
					got[f.GetName()] += c.GetValue()
				}
			}
		}
		if tt.records {
			assert.Equal(t, map[string]float64{"rlcheck_violations_total": 1, "rlcheck_record_violations_total": 0}, got)
		} else {
			assert.Equal(t, map[string]float64{"rlcheck_violations_total": 0}, got)
		}
	}
}

func TestReportsShowBothViews(t *testing.T) {
	res, err := Run(twoWorkers(0), Options{})
	require.NoError(t, err)
	var text, js bytes.Buffer
	require.NoError(t, WriteText(&text, res))
	assert.Contains(t, text.String(), "strategy  sends  duration  1/100ms  records 1/100ms\ncombined      2   0.070 s        1                0\n")
	require.NoError(t, WriteJSON(&js, res))
	var out struct {
		Strategies []struct {
			Rules []map[string]any `json:"rules"`
		} `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, 1.0, out.Strategies[0].Rules[0]["violations"])
	assert.Equal(t, 0.0, out.Strategies[0].Rules[0]["record_violations"])

	s := twoWorkers(0)
	s.SendDelay = nil
	res, err = Run(s, Options{})
	require.NoError(t, err)
	js.Reset()
	require.NoError(t, WriteJSON(&js, res))
	assert.NotContains(t, js.String(), "record_violations", "no send path: one view")
}

func TestMarginReports(t *testing.T) {
	r, err := FindMargins(twoWorkers(0), MarginOptions{Runs: 3, Resolution: msec})
	require.NoError(t, err)
	var text, js bytes.Buffer
	require.NoError(t, WriteMarginsText(&text, r))
	assert.Contains(t, text.String(), "combined    3/3 (100.0%)    30ms   30ms        0.070 s    0.100 s  +42.9%\n")
	require.NoError(t, WriteMarginsJSON(&js, r))
	var out struct {
		ResolutionNs int64 `json:"resolution_ns"`
		Strategies   []struct {
			ViolatingAtZero int   `json:"runs_violating_at_zero"`
			MarginNs        int64 `json:"margin_ns"`
			BoundNs         int64 `json:"bound_ns"`
			AtMargin        struct {
				DurationNs int64 `json:"duration_ns"`
			} `json:"at_margin"`
		} `json:"strategies"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, int64(msec), out.ResolutionNs)
	st := out.Strategies[0]
	assert.Equal(t, []int64{3, int64(30 * msec), int64(30 * msec), int64(100 * msec)},
		[]int64{int64(st.ViolatingAtZero), st.MarginNs, st.BoundNs, st.AtMargin.DurationNs})
}

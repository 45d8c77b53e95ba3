package simulate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// TestMetricsParse writes a run's .prom file and reads it back with the
// Prometheus text parser, checking each figure against the run.
func TestMetricsParse(t *testing.T) {
	s := &workload.Scenario{
		Name: "metrics", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Strategies: []string{"sequential", "combined", "xrate-chained"}, Callers: 30, Workers: 1,
		Arrivals: workload.Arrivals{Kind: workload.AllAtOnce}, Lateness: workload.Dist{Kind: workload.Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond}, Seed: 1,
	}
	res, err := Run(s, Options{})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "rlcheck.prom")
	require.NoError(t, WriteMetricsFile(path, res))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	require.NoError(t, err)
	find := func(name, strategy, ru, stat string) *dto.Metric {
		t.Helper()
		fam, ok := fams[name]
		require.True(t, ok, "no %s in the file", name)
		for _, m := range fam.Metric {
			l := map[string]string{}
			for _, p := range m.Label {
				l[p.GetName()] = p.GetValue()
			}
			if l["scenario"] == "metrics" && l["strategy"] == strategy && l["rule"] == ru && l["stat"] == stat {
				return m
			}
		}
		require.FailNowf(t, "missing series", "no %s{strategy=%q, rule=%q, stat=%q}", name, strategy, ru, stat)
		return nil
	}
	assert.Equal(t, dto.MetricType_COUNTER, fams["rlcheck_violations_total"].GetType(), "type of rlcheck_violations_total")
	for _, st := range res.Strategies {
		us := Usage(&st, rule.HalfOpen)
		bind, _ := Binding(us)
		for k, rr := range st.Rules {
			name := rr.Rule.String()
			assert.Equal(t, float64(rr.Violations), find("rlcheck_violations_total", st.Name, name, "").GetCounter().GetValue(), "%s %s: violations", st.Name, name)
			assert.Equal(t, float64(rr.MaxInWindow)/float64(rr.Rule.Limit), find("rlcheck_rule_usage_ratio", st.Name, name, "peak").GetGauge().GetValue(), "%s %s: peak, max in window %d", st.Name, name, rr.MaxInWindow)
			assert.Equal(t, us[k].Mean, find("rlcheck_rule_usage_ratio", st.Name, name, "mean").GetGauge().GetValue(), "%s %s: mean", st.Name, name)
			assert.Equal(t, rr.Waited.Seconds(), find("rlcheck_wait_seconds", st.Name, name, "").GetGauge().GetValue(), "%s %s: wait", st.Name, name)
			want := 0.0
			if k == bind {
				want = 1
			}
			assert.Equal(t, want, find("rlcheck_rule_binding", st.Name, name, "").GetGauge().GetValue(), "%s %s: binding", st.Name, name)
		}
	}
}

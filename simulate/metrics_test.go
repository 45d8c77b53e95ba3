package simulate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rlcheck/rlcheck/rule"
)

// TestMetricsParse writes a run's .prom file and reads it back with the
// Prometheus text parser, checking each figure against the run.
func TestMetricsParse(t *testing.T) {
	s := &Scenario{
		Name: "metrics", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}},
		Strategies: []string{"sequential", "combined", "xrate-chained"}, Callers: 30, Workers: 1,
		Arrivals: Arrivals{Kind: AllAtOnce}, Lateness: Dist{Kind: Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond}, Seed: 1,
	}
	res, err := Run(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rlcheck.prom")
	if err := WriteMetricsFile(path, res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	find := func(name, strategy, ru, stat string) *dto.Metric {
		t.Helper()
		fam, ok := fams[name]
		if !ok {
			t.Fatalf("no %s in the file", name)
		}
		for _, m := range fam.Metric {
			l := map[string]string{}
			for _, p := range m.Label {
				l[p.GetName()] = p.GetValue()
			}
			if l["scenario"] == "metrics" && l["strategy"] == strategy && l["rule"] == ru && l["stat"] == stat {
				return m
			}
		}
		t.Fatalf("no %s{strategy=%q, rule=%q, stat=%q}", name, strategy, ru, stat)
		return nil
	}
	if typ := fams["rlcheck_violations_total"].GetType(); typ != dto.MetricType_COUNTER {
		t.Errorf("rlcheck_violations_total is a %v", typ)
	}
	for _, st := range res.Strategies {
		us := Usage(&st, rule.HalfOpen)
		bind, _ := Binding(us)
		for k, rr := range st.Rules {
			name := rr.Rule.String()
			if got := find("rlcheck_violations_total", st.Name, name, "").GetCounter().GetValue(); got != float64(rr.Violations) {
				t.Errorf("%s %s: violations %v, want %d", st.Name, name, got, rr.Violations)
			}
			if got := find("rlcheck_rule_usage_ratio", st.Name, name, "peak").GetGauge().GetValue(); got != float64(rr.MaxInWindow)/float64(rr.Rule.Limit) {
				t.Errorf("%s %s: peak %v, max in window %d", st.Name, name, got, rr.MaxInWindow)
			}
			if got := find("rlcheck_rule_usage_ratio", st.Name, name, "mean").GetGauge().GetValue(); got != us[k].Mean {
				t.Errorf("%s %s: mean %v, want %v", st.Name, name, got, us[k].Mean)
			}
			if got := find("rlcheck_wait_seconds", st.Name, name, "").GetGauge().GetValue(); got != rr.Waited.Seconds() {
				t.Errorf("%s %s: wait %v, want %v", st.Name, name, got, rr.Waited.Seconds())
			}
			want := 0.0
			if k == bind {
				want = 1
			}
			if got := find("rlcheck_rule_binding", st.Name, name, "").GetGauge().GetValue(); got != want {
				t.Errorf("%s %s: binding %v, want %v", st.Name, name, got, want)
			}
		}
	}
}

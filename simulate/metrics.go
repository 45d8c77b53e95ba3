package simulate

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
)

// MetricsRegistry returns a dedicated registry holding r's figures, named
// for node_exporter's textfile collector: rlcheck_rule_usage_ratio (peak
// and mean), rlcheck_wait_seconds (time waited with the rule binding, for
// strategies that keep it), rlcheck_rule_binding (1 for the binding rule)
// and rlcheck_violations_total (at the provider), labelled by scenario,
// strategy and rule; when the report shows the limiter's own view
// (Result.ShowRecords), rlcheck_record_violations_total counts the
// violations among its admissions.
func MetricsRegistry(r *Result) *prometheus.Registry {
	reg := metrics.NewRegistry()
	labels := []string{"scenario", "strategy", "rule"}
	usage := metrics.UsageRatioVec(labels...)
	wait := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rlcheck_wait_seconds",
		Help: "Time callers waited with this rule as the binding (longest) wait, summed over callers.",
	}, labels)
	binding := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rlcheck_rule_binding",
		Help: "1 for the rule that binds the strategy, 0 for the others.",
	}, labels)
	viol := metrics.ViolationsVec(labels...)
	reg.MustRegister(usage, wait, binding, viol)
	var records *prometheus.CounterVec
	if r.ShowRecords() {
		records = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlcheck_record_violations_total",
			Help: "Violations among the instants the limiter admitted its calls, beside rlcheck_violations_total at the provider.",
		}, labels)
		reg.MustRegister(records)
	}
	for i := range r.Strategies {
		st := &r.Strategies[i]
		us := Usage(st, rule.HalfOpen)
		bind, _ := Binding(us)
		for k, u := range us {
			l := []string{r.Scenario, st.Name, u.Rule.String()}
			usage.WithLabelValues(append(l, "peak")...).Set(u.Peak)
			usage.WithLabelValues(append(l, "mean")...).Set(u.Mean)
			if u.HasStats {
				wait.WithLabelValues(l...).Set(u.Waited.Seconds())
			}
			b := 0.0
			if k == bind {
				b = 1
			}
			binding.WithLabelValues(l...).Set(b)
			viol.WithLabelValues(l...).Add(float64(st.Rules[k].Violations))
			if records != nil {
				records.WithLabelValues(l...).Add(float64(st.Rules[k].RecordViolations))
			}
		}
	}
	return reg
}

// WriteMetricsFile writes r's metrics to path in the Prometheus text
// format, through a temporary file renamed into place, so a textfile
// collector never reads half a file.
func WriteMetricsFile(path string, r *Result) error {
	return prometheus.WriteToTextfile(path, MetricsRegistry(r))
}

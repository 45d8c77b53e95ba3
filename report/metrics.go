package report

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
)

// MetricsRegistry holds a check's figures for node_exporter's textfile
// collector: each rule's peak window usage, in its unit (none for a
// bucket), the mean for a sliding call rule when the send times were kept,
// and its violations, per input group and key. Keys and file
// names that are not UTF-8 are labelled as keytext.Show writes them.
func MetricsRegistry(results []*Result) *prometheus.Registry {
	reg := metrics.NewRegistry()
	labels := []string{"input", "key", "rule"}
	usage := metrics.UsageRatioVec(labels...)
	viol := metrics.ViolationsVec(labels...)
	reg.MustRegister(usage, viol)
	for _, res := range results {
		names := make([]string, len(res.Files))
		for i, f := range res.Files {
			names[i] = f.Name
		}
		input := keytext.Show(strings.Join(names, ","))
		for _, g := range res.Groups {
			for _, rr := range g.Report.Rules {
				l := []string{input, keytext.Show(g.Key), rr.Rule.String()}
				if rr.Rule.Kind != rule.Bucket { // a bucket has no window to fill
					usage.WithLabelValues(append(l, "peak")...).Set(float64(rr.MaxInWindow) / float64(rr.Rule.Limit))
				}
				if g.Times != nil && rr.Rule.SlidingCalls() {
					mean := metrics.MeanOccupancy(g.Times, rr.Rule.Window) / float64(rr.Rule.Limit)
					usage.WithLabelValues(append(l, "mean")...).Set(mean)
				}
				viol.WithLabelValues(l...).Add(float64(rr.Violations))
			}
		}
		if u := res.Unlisted; u != nil {
			for _, t := range u.Totals {
				l := []string{input, metrics.OtherKeys, t.Rule.String()}
				if t.Rule.Kind != rule.Bucket {
					usage.WithLabelValues(append(l, "peak")...).Set(float64(t.MaxInWindow) / float64(t.Rule.Limit))
				}
				viol.WithLabelValues(l...).Add(float64(t.Violations))
			}
		}
	}
	return reg
}

// WriteMetricsFile writes --metrics FILE.prom for rlcheck check.
func WriteMetricsFile(path string, results []*Result) error {
	return prometheus.WriteToTextfile(path, MetricsRegistry(results))
}

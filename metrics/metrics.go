package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// UsageRatioVec is rlcheck_rule_usage_ratio with the given labels and
// "stat" (peak or mean), shared by every command so that both write
// the same metric.
func UsageRatioVec(labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rlcheck_rule_usage_ratio",
		Help: "Sends in a window over the rule's limit: the peak, or the mean over the run or log.",
	}, append(labels, "stat"))
}

// ViolationsVec is rlcheck_violations_total with the given labels.
func ViolationsVec(labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rlcheck_violations_total",
		Help: "Sends that overfilled a window of the rule, as counted by the checker.",
	}, labels)
}

// MeanOccupancy is the number of sends in the trailing window (t-w, t],
// averaged over t from the first send to the last. Each send counts for
// as long as it stays in the window before the last send, so one pass does.
func MeanOccupancy(sends []int64, w time.Duration) float64 {
	if len(sends) == 0 {
		return 0
	}
	first, last := sends[0], sends[len(sends)-1]
	if last == first {
		return float64(len(sends))
	}
	var sum float64 // ns; float because n*W overflows int64 for day windows
	for _, s := range sends {
		sum += float64(min(int64(w), last-s))
	}
	return sum / float64(last-first)
}

package serve

import (
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlcheck/rlcheck/metrics"
)

var (
	requestsDesc = prometheus.NewDesc("rlcheck_serve_requests_total",
		"Requests judged, by verdict: ok, or violation (answered 429 unless recording).", []string{"verdict"}, nil)
	inFlightDesc = prometheus.NewDesc("rlcheck_serve_in_flight",
		"Requests arrived and not yet answered.", nil, nil)
)

// collector reads the figures at scrape time: for each key label and rule,
// the window's current and peak usage against the limit, and the
// violations so far (the in-flight cap as rule "in-flight/N"). A key past
// the Options.MetricsKeys cap counts under key="(other keys)", and a key
// given back keeps counting under its label.
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	metrics.UsageRatioVec("key", "rule").Describe(ch)
	metrics.ViolationsVec("key", "rule").Describe(ch)
	ch <- requestsDesc
	ch <- inFlightDesc
}

// snapshot sums up every label's series; no lock is held once it returns,
// so nothing the metrics library does can leave one taken.
func (s *Server) snapshot() map[string]*metrics.KeySeries {
	out := map[string]*metrics.KeySeries{}
	get := func(label string) *metrics.KeySeries {
		if out[label] == nil {
			out[label] = metrics.NewKeySeries(len(s.opt.Rules))
		}
		return out[label]
	}
	s.mu.Lock()
	keys := append([]*key(nil), s.list...)
	now := s.base + int64(time.Since(s.start))
	for label, g := range s.gone {
		get(label).Merge(g)
	}
	s.mu.Unlock()
	for _, k := range keys {
		func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			at := max(now, k.chk.Last())
			get(k.label).Add(k.chk, func(i int) int64 { n, _ := k.chk.InWindow(i, at); return n }, k.capViol)
		}()
	}
	return out
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	snap := s.snapshot()
	labels := make([]string, 0, len(snap))
	for l := range snap {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	usage := metrics.UsageRatioVec("key", "rule")
	viol := metrics.ViolationsVec("key", "rule")
	capName := "in-flight/" + strconv.Itoa(s.opt.MaxInFlight)
	for _, l := range labels {
		g := snap[l]
		for i, r := range s.opt.Rules {
			name, limit := r.String(), float64(r.Limit)
			usage.WithLabelValues(l, name, "current").Set(float64(g.Current[i]) / limit)
			usage.WithLabelValues(l, name, "peak").Set(float64(g.Peak[i]) / limit)
			viol.WithLabelValues(l, name).Add(float64(g.Violations[i]))
		}
		if s.opt.MaxInFlight > 0 {
			viol.WithLabelValues(l, capName).Add(float64(g.Cap))
		}
	}
	usage.Collect(ch)
	viol.Collect(ch)
	judged, v := s.Requests()
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(judged-v), "ok")
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(v), "violation")
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.inFlight.Load()))
}

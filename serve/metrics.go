package serve

import (
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

// collector reads the figures at scrape time: for each key and rule, the
// window's current and peak usage against the limit, and the violations
// so far (the in-flight cap as rule "in-flight/N").
type collector struct{ s *Server }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	metrics.UsageRatioVec("key", "rule").Describe(ch)
	metrics.ViolationsVec("key", "rule").Describe(ch)
	ch <- requestsDesc
	ch <- inFlightDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	usage := metrics.UsageRatioVec("key", "rule")
	viol := metrics.ViolationsVec("key", "rule")
	s.mu.Lock()
	keys := append([]*key(nil), s.list...)
	now := s.base + int64(time.Since(s.start))
	s.mu.Unlock()
	capName := "in-flight/" + strconv.Itoa(s.opt.MaxInFlight)
	for _, k := range keys {
		k.mu.Lock()
		rep := k.chk.Report()
		at := max(now, rep.Last)
		for i, r := range s.opt.Rules {
			n, _ := k.chk.InWindow(i, at)
			name := r.String()
			usage.WithLabelValues(k.name, name, "current").Set(float64(n) / float64(r.Limit))
			usage.WithLabelValues(k.name, name, "peak").Set(float64(rep.Rules[i].MaxInWindow) / float64(r.Limit))
			viol.WithLabelValues(k.name, name).Add(float64(rep.Rules[i].Violations))
		}
		if s.opt.MaxInFlight > 0 {
			viol.WithLabelValues(k.name, capName).Add(float64(k.capViol))
		}
		k.mu.Unlock()
	}
	usage.Collect(ch)
	viol.Collect(ch)
	judged, v := s.Requests()
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(judged-v), "ok")
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(v), "violation")
	ch <- prometheus.MustNewConstMetric(inFlightDesc, prometheus.GaugeValue, float64(s.inFlight.Load()))
}

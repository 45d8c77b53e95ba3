package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlcheck/rlcheck/buildinfo"
)

// BuildInfo is rlcheck_build_info{version, revision, goversion} 1: which
// rlcheck wrote the file, so a dashboard can tell a change in the code
// from a change in the traffic.
func BuildInfo() prometheus.Collector {
	i := buildinfo.Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rlcheck_build_info",
		Help: "Always 1; the labels name the rlcheck build that wrote the figures.",
		ConstLabels: prometheus.Labels{
			"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion,
		},
	})
	g.Set(1)
	return g
}

// NewRegistry returns a registry holding BuildInfo, for a command's
// --metrics file.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(BuildInfo())
	return reg
}

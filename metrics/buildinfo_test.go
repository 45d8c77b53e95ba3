package metrics

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/buildinfo"
)

func TestBuildInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.prom")
	require.NoError(t, prometheus.WriteToTextfile(path, NewRegistry()))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	require.NoError(t, err)
	ms := fams["rlcheck_build_info"].GetMetric()
	require.Len(t, ms, 1)
	labels := map[string]string{}
	for _, l := range ms[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	i := buildinfo.Read()
	assert.Equal(t, map[string]string{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion}, labels)
	assert.Equal(t, 1.0, ms[0].GetGauge().GetValue())
}

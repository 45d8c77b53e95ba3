package main

import (
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSimulateMetricsFile(t *testing.T) {
	for _, extra := range [][]string{nil, {"--runs", "3"}} {
		path := filepath.Join(t.TempDir(), "seed.prom")
		args := append([]string{"simulate", "seed", "--metrics", path}, extra...)
		_, errOut, code := run(t, "", args...)
		require.Equal(t, exitOK, code, "%v: exit code; stderr %q", args, errOut)
		fams := readProm(t, path)
		for _, name := range []string{"rlcheck_rule_usage_ratio", "rlcheck_wait_seconds", "rlcheck_violations_total", "rlcheck_rule_binding"} {
			assert.NotEmpty(t, fams[name].GetMetric(), "%v: no %s", args, name)
		}
	}
}

// readProm parses a .prom file with Prometheus' own text parser.
func readProm(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	require.NoError(t, err, path)
	return fams
}

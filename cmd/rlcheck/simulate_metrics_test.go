package main

import (
	"os"
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestSimulateMetricsFile(t *testing.T) {
	for _, extra := range [][]string{nil, {"--runs", "3"}} {
		path := filepath.Join(t.TempDir(), "seed.prom")
		args := append([]string{"simulate", "seed", "--metrics", path}, extra...)
		if _, errOut, code := run(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d, %s", args, code, errOut)
		}
		fams := readProm(t, path)
		for _, name := range []string{"rlcheck_rule_usage_ratio", "rlcheck_wait_seconds", "rlcheck_violations_total", "rlcheck_rule_binding"} {
			if len(fams[name].GetMetric()) == 0 {
				t.Errorf("%v: no %s", args, name)
			}
		}
	}
}

// readProm parses a .prom file with Prometheus' own text parser.
func readProm(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return fams
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckMetricsFile(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "sends.txt")
	// Six sends in one second, then a quiet one: 5/1s breaks once.
	require.NoError(t, os.WriteFile(log, []byte("0\n0.1\n0.2\n0.3\n0.4\n0.5\n3\n"), 0o644))
	prom := filepath.Join(dir, "check.prom")
	for _, extra := range [][]string{nil, {"--plot", filepath.Join(dir, "p.svg")}} {
		args := append([]string{"check", "--rules", "5/1s,12/3s", "--metrics", prom, log}, extra...)
		_, errOut, code := run(t, "", args...)
		require.Equal(t, exitViolations, code, "%v: exit code; stderr %q", args, errOut)
		fams := readProm(t, prom)
		got := map[string]float64{}
		for _, name := range []string{"rlcheck_rule_usage_ratio", "rlcheck_violations_total"} {
			for _, m := range fams[name].GetMetric() {
				key := name
				for _, l := range m.GetLabel() {
					if l.GetName() == "rule" || l.GetName() == "stat" {
						key += " " + l.GetValue()
					}
				}
				got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		want := map[string]float64{
			"rlcheck_rule_usage_ratio 5/1s peak":  1.2,
			"rlcheck_rule_usage_ratio 12/3s peak": 6.0 / 12, // 3 is exactly 3 s after 0
			"rlcheck_violations_total 5/1s":       1,
			"rlcheck_violations_total 12/3s":      0,
		}
		if extra != nil {
			// Occupancy of 5/1s over [0, 3]: the six sends stay 1 s each.
			want["rlcheck_rule_usage_ratio 5/1s mean"] = 6.0 / 3 / 5
			want["rlcheck_rule_usage_ratio 12/3s mean"] = (3.0 + 2.9 + 2.8 + 2.7 + 2.6 + 2.5) / 3 / 12
		}
		assert.InDeltaMapValues(t, want, got, 1e-9, "%v: the series written", extra)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/buildinfo"
)

func TestVersion(t *testing.T) {
	want := buildinfo.Read().String()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := run(t, "", args...)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, want, out, "%v", args)
	}
	_, _, code := run(t, "", "version", "extra")
	assert.Equal(t, exitUsage, code)
}

// TestMetricsBuildInfo: every --metrics file names the build that wrote it.
func TestMetricsBuildInfo(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "sends.txt")
	require.NoError(t, os.WriteFile(log, []byte("0\n0.5\n1\n"), 0o644))
	info := buildinfo.Read()
	for name, args := range map[string][]string{
		"check":    {"check", "--rules", "5/1s", log},
		"simulate": {"simulate", "seed", "--strategies", "combined"},
	} {
		prom := filepath.Join(dir, name+".prom")
		_, errOut, code := run(t, "", append(args, "--metrics", prom)...)
		require.Equal(t, exitOK, code, errOut)
		ms := readProm(t, prom)["rlcheck_build_info"].GetMetric()
		require.Len(t, ms, 1, name)
		labels := map[string]string{}
		for _, l := range ms[0].GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		assert.Equal(t, map[string]string{"version": info.Version, "revision": info.Revision, "goversion": info.GoVersion}, labels, name)
		assert.Equal(t, 1.0, ms[0].GetGauge().GetValue(), name)
	}
}

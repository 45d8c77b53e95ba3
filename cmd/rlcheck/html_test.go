package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTMLFlag: --html writes the page and leaves the command's own report
// and exit code as they were (the report needs listed violations that the
// text must not show unless --list asks).
func TestHTMLFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixture := "../../testdata/fixtures/asyncio-sequential.txt"
	for _, list := range []string{"0", "1"} {
		page := filepath.Join(dir, "check-"+list+".html")
		want, _, wantCode := run(t, "", "check", "--rules", "5/1s,12/3s", "--list", list, fixture)
		out, errOut, code := run(t, "", "check", "--rules", "5/1s,12/3s", "--list", list, "--html", page, fixture)
		assert.Equal(t, wantCode, code, "stderr %q", errOut)
		assert.Equal(t, want, out, "--list %s", list)
		assertPage(t, page)
	}
	_, errOut, code := run(t, "", "check", "--rules", "5/1s", "--per-file", "--html", filepath.Join(dir, "x.html"), fixture)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--per-file")

	page := filepath.Join(dir, "sim", "seed.html")
	_, errOut, code = run(t, "", "simulate", "seed", "--plot-runs", "20", "--html", page)
	require.Equal(t, exitOK, code, "stderr %q", errOut)
	assertPage(t, page)

	page = filepath.Join(dir, "run.html")
	_, errOut, code = run(t, "", "run", "seed", "--speed", "20", "--seeds", "5", "--strategies", "combined", "--html", page)
	require.Contains(t, []int{exitOK, exitViolations}, code, "stderr %q", errOut)
	assertPage(t, page)
}

func assertPage(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if assert.NoError(t, err) {
		assert.Contains(t, string(data), "uPlot", path)
		assert.Contains(t, string(data), `<script id="data" type="application/octet-stream">H4sI`, "%s: gzipped data inlined", path)
	}
}

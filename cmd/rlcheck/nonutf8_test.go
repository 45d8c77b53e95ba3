package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNonUTF8KeyInEveryOutput holds every writer to keytext's rule: a key
// (or file name) that is not UTF-8 reads caf\xe9 in each output, none
// fails on it, and none writes the raw byte or a replacement character.
func TestNonUTF8KeyInEveryOutput(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	dir := t.TempDir()
	log := filepath.Join(dir, "bad\xe8.csv")
	require.NoError(t, os.WriteFile(log, []byte("ts,k\n1700000000.0,caf\xe9\n1700000000.1,caf\xe9\n"), 0o644))
	for _, format := range []string{"text", "json", "junit", "github"} {
		out, errOut, code := run(t, "", "check", "--rules", "1/1s", "--key-col", "k", "--format", format, log)
		require.Equal(t, exitViolations, code, "%s: %s", format, errOut)
		want := `caf\xe9`
		if format == "json" {
			want = `"caf\\xe9"` // the shown key, JSON-encoded
		}
		assert.Contains(t, out, want, format)
		assert.NotContains(t, out, "\xe9", format)
		assert.NotContains(t, out, "\ufffd", format)
	}
	prom, html := filepath.Join(dir, "out.prom"), filepath.Join(dir, "out.html")
	_, errOut, code := run(t, "", "check", "--rules", "1/1s", "--key-col", "k", "--metrics", prom, "--html", html, log)
	require.Equal(t, exitViolations, code, errOut)
	fams := readProm(t, prom)
	var labels []string
	for _, m := range fams["rlcheck_violations_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
	}
	assert.Contains(t, labels, `key=caf\xe9`)
	assert.Contains(t, labels, "input="+strings.ReplaceAll(log, "\xe8", `\xe8`))
	page, err := os.ReadFile(html)
	require.NoError(t, err)
	assert.True(t, utf8.Valid(page))
	assert.Contains(t, string(page), `caf\xe9  1/1s`, "the report in the page")
}

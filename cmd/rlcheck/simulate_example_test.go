package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// TestSimulateExampleLoads: simulate --example prints a scenario that
// loads back, validates and simulates, with no scenario argument.
func TestSimulateExampleLoads(t *testing.T) {
	out, errOut, code := run(t, "", "simulate", "--example")
	require.Equal(t, exitOK, code, "stderr %q", errOut)
	path := filepath.Join(t.TempDir(), "my.yaml")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	scn, err := scenarios.Load(path)
	require.NoError(t, err, "the example does not load:\n%s", out)
	require.NoError(t, catalog.Validate(&scn.Scenario))
	_, errOut, code = run(t, "", "simulate", path)
	assert.Equal(t, exitOK, code, "simulating the example: stderr %q", errOut)

	_, errOut, code = run(t, "", "simulate", "--example", "seed")
	assert.Equal(t, exitUsage, code, "--example with a scenario: stderr %q", errOut)
}

// TestSimulateExampleNamesEveryField: the example and simulate --help name
// every top-level field of the scenario reference in docs/simulate.md, so a
// field added there cannot be left out of either.
func TestSimulateExampleNamesEveryField(t *testing.T) {
	doc, err := os.ReadFile("../../docs/simulate.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)## Scenario files\n.*?```yaml\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, block, "docs/simulate.md has no scenario reference")
	var fields []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z_]+):`).FindAllSubmatch(block[1], -1) {
		fields = append(fields, string(m[1]))
	}
	require.Greater(t, len(fields), 10, "fields in the reference")
	var example map[string]any
	out, _, _ := run(t, "", "simulate", "--example")
	require.NoError(t, yaml.Unmarshal([]byte(out), &example))
	helpText, _, _ := run(t, "", "simulate", "--help")
	for _, f := range fields {
		assert.Contains(t, example, f, "the example lacks %s", f)
		assert.Regexp(t, `(?m)^  .*\b`+f+`\b`, helpText, "simulate --help does not describe %s", f)
	}
	assert.True(t, strings.Contains(helpText, "--example"), "simulate --help names --example")
}

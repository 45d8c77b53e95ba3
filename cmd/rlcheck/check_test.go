package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/golden"
)

const (
	seqLog  = "../../testdata/fixtures/asyncio-sequential.txt"
	combLog = "../../testdata/fixtures/asyncio-combined.txt"
)

func TestCheckGolden(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	tests := []struct {
		golden string
		code   int
		args   []string
	}{
		{"sequential.txt", 1, []string{"check", "--rules", "5/1s,12/3s", seqLog}},
		{"sequential.json", 1, []string{"check", "--rules", "5/1s,12/3s", "--format", "json", seqLog}},
		{"sequential-list.txt", 1, []string{"check", "--rule", "5/1s", "--rule", "12/3s", "--list", "2", seqLog}},
		{"sequential-list.json", 1, []string{"check", "--rules", "5/1s", "--list", "1", "--format", "json", seqLog}},
		{"combined.txt", 0, []string{"check", "--rules", "5/1s,12/3s", combLog}},
		{"combined.json", 0, []string{"check", "--rules", "5/1s,12/3s", "--format", "json", combLog}},
		{"combined-closed.txt", 0, []string{"check", "--rules", "5/1s,12/3s", "--boundary", "closed", combLog}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			require.Equal(t, tt.code, code, "exit code; stderr %q", errOut)
			require.Empty(t, errOut, "stderr")
			golden.Assert(t, filepath.Join("check", tt.golden), out)
		})
	}
}

// TestCheckFixtureCounts pins the acceptance figures independently of the
// golden files: 2 and 0 for sequential, 0 and 0 for combined.
func TestCheckFixtureCounts(t *testing.T) {
	for _, tt := range []struct {
		log  string
		code int
		want []int64
	}{{seqLog, 1, []int64{2, 0}}, {combLog, 0, []int64{0, 0}}} {
		out, _, code := run(t, "", "check", "--rules", "5/1s,12/3s", "--format", "json", tt.log)
		assert.Equal(t, tt.code, code, "%s: exit code", tt.log)
		var res struct {
			Sends int64
			Rules []struct {
				Rule       string
				Window     string
				Violations int64
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res), out)
		require.Equal(t, int64(30), res.Sends, "%s: sends in %+v", tt.log, res)
		require.Len(t, res.Rules, 2, "%s: rules in %+v", tt.log, res)
		require.Equal(t, []string{"1s", "3s"}, []string{res.Rules[0].Window, res.Rules[1].Window}, "%s: windows in %+v", tt.log, res)
		for i, w := range tt.want {
			assert.Equal(t, w, res.Rules[i].Violations, "%s: violations of %s", tt.log, res.Rules[i].Rule)
		}
	}
}

func TestCheckStdin(t *testing.T) {
	data, err := os.ReadFile(seqLog)
	require.NoError(t, err)
	out, _, code := run(t, string(data), "check", "--rules", "5/1s,12/3s", "-")
	assert.Equal(t, exitViolations, code, "exit code")
	assert.Contains(t, out, "FAIL: 2 violations (5/1s: 2)")
}

func TestCheckErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	bad := write("bad.txt", "0.5\n1.5\noops\n")
	unordered := write("unordered.txt", "1\n2\n1.5\n")
	empty := write("empty.txt", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no rules", []string{"check", seqLog}, "no rules"},
		{"bad rule", []string{"check", "--rules", "5/fortnight", seqLog}, `rule "5/fortnight"`},
		{"zero limit", []string{"check", "--rule", "0/1s", seqLog}, "limit must be positive"},
		{"unknown flag", []string{"check", "--rulez", "5/1s", seqLog}, "unknown flag: --rulez"},
		{"no file", []string{"check", "--rules", "5/1s"}, "check needs at least one send log"},
		{"missing file", []string{"check", "--rules", "5/1s", filepath.Join(dir, "nope.txt")}, "no such file"},
		{"bad line", []string{"check", "--rules", "5/1s", bad}, bad + `:3: not a timestamp (want decimal seconds, an integer epoch or RFC 3339): "oops"`},
		{"out of order", []string{"check", "--rules", "5/1s", "--max-disorder", "0", unordered}, unordered + ":3: 500ms earlier than line 2, beyond the reorder horizon --max-disorder 0s"},
		{"empty", []string{"check", "--rules", "5/1s", empty}, empty + ": no sends: the input is empty"},
		{"bad format", []string{"check", "--rules", "5/1s", "--format", "xml", seqLog}, `--format "xml"`},
		{"bad unit", []string{"check", "--rules", "5/1s", "--unit", "fortnights", seqLog}, `unit "fortnights"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			assert.Equal(t, exitUsage, code, "exit code")
			assert.Empty(t, out, "stdout")
			assert.True(t, strings.HasPrefix(errOut, "rlcheck: "), "stderr %q does not start with \"rlcheck: \"", errOut)
			assert.Contains(t, errOut, tt.want, "stderr")
		})
	}
}

func TestCheckSkipInvalid(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.txt")
	require.NoError(t, os.WriteFile(p, []byte("0\n0.1\nbad\n0.2\n"), 0o644))
	out, _, code := run(t, "", "check", "--rules", "2/1s", "--skip-invalid", p)
	assert.Equal(t, exitViolations, code, "exit code")
	assert.Contains(t, out, "skipped 1 invalid line of")
	assert.Contains(t, out, ":3: not a timestamp")
}

func TestCheckFleetGolden(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	h1, h2 := "../../testdata/fleet/host1.csv", "../../testdata/fleet/host2.csv.gz"
	tests := []struct {
		golden string
		code   int
		args   []string
	}{
		{"fleet-merged.txt", 1, []string{"check", "--rules", "3/1s", h1, h2}},
		{"fleet-per-file.txt", 1, []string{"check", "--rules", "3/1s", "--per-file", h1, h2}},
		{"fleet-per-key.txt", 1, []string{"check", "--rules", "2/1s,4/2s", "--key-col", "tenant", h1, h2}},
		{"fleet-per-key.json", 1, []string{"check", "--rules", "2/1s", "--key-col", "tenant", "--format", "json", h1, h2}},
		{"fleet-in-flight.txt", 1, []string{"check", "--rules", "10/1s", "--max-in-flight", "2", "--duration-col", "took_ms", "--duration-unit", "ms", h1, h2}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			require.Equal(t, tt.code, code, "exit code; stderr %q, stdout:\n%s", errOut, out)
			require.Empty(t, errOut, "stderr")
			golden.Assert(t, filepath.Join("check", tt.golden), out)
		})
	}
}

func TestCheckContractAndAccessLog(t *testing.T) {
	bunched := "../../sendlog/accesslog/testdata/seconds/bunched.log"
	out, errOut, code := run(t, "", "check", "--input-format", "nginx", "--rules", "5/1s", bunched)
	assert.Equal(t, exitViolations, code, "bunched: exit code; stderr %q", errOut)
	assert.Contains(t, out, "5/1s  5           10", "bunched")
	out, errOut, code = run(t, "", "check", "--contract", "../../testdata/contracts/api.yaml", "--input-format", "nginx", bunched)
	assert.Equal(t, exitOK, code, "contract: exit code; stderr %q", errOut)
	assert.Contains(t, out, "10000/24h", "contract")
	assert.Contains(t, out, "in flight: at most 4 allowed", "contract")
	_, errOut, code = run(t, "", "check", "--input-format", "nginx", "--rules", "5/1s", "--status", "5xx", bunched)
	assert.Equal(t, exitUsage, code, "filtered: exit code")
	assert.Contains(t, errOut, "the filters left out all 10 requests", "filtered")
	_, errOut, code = run(t, "", "check", "--rules", "5/1s", "--status", "5xx", seqLog)
	assert.Equal(t, exitUsage, code, "filter on a plain log: exit code")
	assert.Contains(t, errOut, "give --input-format nginx or apache", "filter on a plain log")
	bad := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("rules: [5/1s]\nmax_inflight: 3\n"), 0o644))
	_, errOut, code = run(t, "", "check", "--contract", bad, seqLog)
	assert.Equal(t, exitUsage, code, "bad contract: exit code")
	assert.Contains(t, errOut, bad+":2:", "bad contract")
	assert.Contains(t, errOut, "max_inflight", "bad contract")
}

func TestCheckGitHubActions(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	out, _, code := run(t, "", "check", "--rules", "5/1s,12/3s", seqLog)
	assert.Equal(t, exitViolations, code, "under GITHUB_ACTIONS: exit code")
	assert.True(t, strings.HasPrefix(out, "::error file="), "under GITHUB_ACTIONS, the output does not start with an annotation:\n%s", out)
	md, err := os.ReadFile(summary)
	if assert.NoError(t, err, "step summary") {
		assert.Contains(t, string(md), "5/1s", "step summary")
	}
	out, _, _ = run(t, "", "check", "--format", "text", "--rules", "5/1s", seqLog)
	assert.Contains(t, out, "FAIL: 2 violations", "--format text under GITHUB_ACTIONS")
	out, _, code = run(t, "", "check", "--format", "junit", "--rules", "5/1s,12/3s", seqLog)
	assert.Equal(t, exitViolations, code, "junit: exit code")
	assert.Contains(t, out, "<testsuite", "junit")
	assert.Contains(t, out, "<failure", "junit")
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const apiContract = "../../testdata/contracts/api.yaml"

// A contract's in-flight cap cannot be checked on a log without end times:
// the report says so and the rules are still checked; a flag wins over the
// contract.
func TestContractInFlightWithoutEndTimes(t *testing.T) {
	out, errOut, code := run(t, "", "check", "--contract", apiContract, seqLog)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "not checked: the contract's in-flight cap (at most 4 at once): the log has no end times")
	assert.Contains(t, out, "OK: every rule held")

	out, errOut, code = run(t, "", "check", "--contract", apiContract, "--max-in-flight", "0", seqLog)
	require.Equal(t, exitOK, code, errOut)
	assert.NotContains(t, out, "not checked")

	_, errOut, code = run(t, "", "check", "--contract", apiContract, "--max-in-flight", "3", seqLog)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--end-col/--end-field or --duration-col/--duration-field")
}

// Outputs are prepared before the work: a missing directory is created, and
// one that cannot be is an error before any verdict is printed.
func TestCheckOutputsPreparedFirst(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "new", "deeper", "x.png")
	out, errOut, code := run(t, "", "check", "--rules", "5/1s", "--plot", png, seqLog)
	require.Equal(t, exitViolations, code, errOut)
	assert.Contains(t, out, "FAIL: 2 violations")
	assert.FileExists(t, png)

	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	for _, flag := range []string{"--plot", "--metrics"} {
		out, errOut, code = run(t, "", "check", "--rules", "5/1s", flag, filepath.Join(notDir, "x.png"), seqLog)
		assert.Equal(t, exitUsage, code, flag)
		assert.Empty(t, out, "%s: no verdict before the error", flag)
		assert.Contains(t, errOut, "cannot write into "+notDir, flag)
	}
	_, errOut, code = run(t, "", "simulate", "seed", "--strategies", "combined", "--metrics", filepath.Join(notDir, "m.prom"))
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "cannot write into "+notDir)
}

func TestSimulateSuggestsScenario(t *testing.T) {
	_, errOut, code := run(t, "", "simulate", "seeed")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `seeed: no such scenario file, and no shipped scenario of that name; did you mean "seed"?`)
	assert.Contains(t, errOut, "(shipped: api-contract, cancellation,")
	_, errOut, _ = run(t, "", "run", "gate-ordr")
	assert.Contains(t, errOut, `did you mean "gate-order"?`)
}

func TestSeedHelpHasNoMadeUpDefault(t *testing.T) {
	for _, cmd := range []string{"simulate", "run"} {
		out, _, code := run(t, "", cmd, "--help")
		require.Equal(t, exitOK, code)
		var line string
		for l := range strings.Lines(out) {
			if strings.Contains(l, "--seed ") {
				line = l
			}
		}
		assert.Contains(t, line, "(default: the scenario's)", cmd)
		assert.NotContains(t, line, "(default -1)", cmd)
	}
	_, errOut, code := run(t, "", "simulate", "seed", "--seed", "-1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `invalid argument "-1" for "--seed" flag: want a whole number, 0 or more`)
}

func TestSimulateRunsFlagsOwnMessages(t *testing.T) {
	_, errOut, code := run(t, "", "simulate", "seed", "--runs", "-1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--runs -1: want 0 (one run) or more")
	assert.NotContains(t, errOut, "--plot-runs")
	_, errOut, _ = run(t, "", "simulate", "seed", "--plot-runs", "0")
	assert.Contains(t, errOut, "--plot-runs 0: want 1 or more")
}

func TestInputErrorAnnotatedUnderGitHubActions(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad,log.txt")
	require.NoError(t, os.WriteFile(bad, []byte("1\n2\nx\n"), 0o644))
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	_, errOut, code := run(t, "", "check", "--rules", "5/1s", bad)
	assert.Equal(t, exitUsage, code)
	file := strings.ReplaceAll(bad, ",", "%2C")
	assert.Equal(t, "::error file="+file+",line=3,title=rlcheck%3A bad input::rlcheck: "+bad+`:3: not a timestamp (want decimal seconds, an integer epoch or RFC 3339): "x"`+"\n", errOut)

	_, errOut, _ = run(t, "1\n2\nx\n", "check", "--rules", "5/1s", "-")
	assert.True(t, strings.HasPrefix(errOut, "::error title=rlcheck%3A bad input::rlcheck: <stdin>:3:"), errOut)
	_, errOut, _ = run(t, "", "check", "--rules", "5/0s", bad)
	assert.True(t, strings.HasPrefix(errOut, "::error title=rlcheck%3A error::rlcheck: "), errOut)
}

func TestCompletion(t *testing.T) {
	complete := func(args ...string) []string {
		t.Helper()
		out, errOut, code := run(t, "", append([]string{"__complete"}, args...)...)
		require.Equal(t, exitOK, code, errOut)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[:len(lines)-1] // the last line is the directive
	}
	assert.Equal(t, []string{"text", "json", "junit", "github"}, complete("check", "--format", ""))
	assert.Equal(t, []string{"text", "json"}, complete("simulate", "seed", "--format", ""))
	assert.Contains(t, complete("check", "--input-format", ""), "nginx")
	assert.Equal(t, []string{"seed"}, complete("simulate", "se"))
	assert.Equal(t, []string{"gate-order"}, complete("run", "gate"))
	got := complete("simulate", "seed", "--strategies", "sequential,comb")
	assert.Equal(t, []string{"sequential,combined", "sequential,combined-counter", "sequential,combined-sliding", "sequential,combined-bucketed"}, got)
	assert.NotContains(t, complete("run", "seed", "--strategies", "sequential,"), "sequential,sequential")
}

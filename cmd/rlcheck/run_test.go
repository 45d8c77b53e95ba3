package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunCommand runs the seed scenario twice, 20 times faster than real
// time. Real-clock violation counts depend on the machine, so the exit code
// may be 0 or 1; the layout of the report may not vary.
func TestRunCommand(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "run", "../../scenarios/seed.yaml", "--speed", "20", "--repeat", "2", "--seeds", "20",
		"--strategies", "sequential,combined,gated")
	require.Contains(t, []int{exitOK, exitViolations}, code, "exit code; stderr %q", errOut)
	assert.Contains(t, errOut, "run 2 of 2...", "no progress on stderr")
	for _, want := range []string{
		"scenario seed on the real clock: rules 5/50ms, 12/150ms, 30 callers, speed 20, 2 run(s)",
		"prediction: virtual clock over seeds 1..20",
		"run 1 of 2:", "run 2 of 2:",
		"measured per run  predicted p5 p50 p95 max  within p5-p95",
		"timer lateness (each completed sleep's overshoot",
	} {
		assert.Contains(t, out, want)
	}
	for _, name := range []string{"sequential", "combined", "gated"} {
		row := regexp.MustCompile(`(?m)^` + name + ` +\d/2 +\d+% +5/50ms +\d+ \d+ +\d+ \d+ \d+ \d+ +\d/2 *$`)
		assert.Regexp(t, row, out, "no summary row for %s", name)
	}
	assert.Equal(t, code == exitViolations, strings.Contains(out, "strategies that must never violate did"),
		"exit %d does not match the report:\n%s", code, out)
}

func TestRunCommandJSON(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "run", "seed", "--speed", "20", "--seeds", "5", "--strategies", "combined", "--format", "json")
	require.Contains(t, []int{exitOK, exitViolations}, code, "exit code; stderr %q", errOut)
	var rep struct {
		Scenario string
		Speed    float64
		Rules    []string
		Runs     []struct {
			Strategies []struct {
				Name string
				Sent int
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, "seed", rep.Scenario, "scenario")
	assert.Equal(t, 20.0, rep.Speed, "speed")
	require.Len(t, rep.Runs, 1, "runs in %+v", rep)
	require.NotEmpty(t, rep.Runs[0].Strategies, "strategies in %+v", rep)
	assert.Equal(t, 30, rep.Runs[0].Strategies[0].Sent, "sent by %s", rep.Runs[0].Strategies[0].Name)
}

func TestRunCommandMargin(t *testing.T) {
	t.Parallel()
	out, errOut, code := run(t, "", "run", "seed", "--speed", "20", "--seeds", "5", "--strategies", "combined", "--margin", "5ms")
	require.Contains(t, []int{exitOK, exitViolations}, code, "exit code; stderr %q", errOut)
	assert.Contains(t, out, "margin: the limiters enforce every window 5ms wider")
	assert.Contains(t, out, "rules 5/50ms, 12/150ms")
}

func TestRunCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"run", "seed", "fleet"},
		{"run", "seed", "--speed", "0"},
		{"run", "seed", "--speed", "-2"},
		{"run", "seed", "--repeat", "0"},
		{"run", "seed", "--seeds", "0"},
		{"run", "seed", "--seed", "-1"},
		{"run", "seed", "--format", "xml"},
		{"run", "seed", "--strategies", "nope"},
		{"run", "no-such-scenario.yaml"},
		{"run", "seed", "--speed", "fast"},
		{"run", "seed", "--margin", "-1ms"},
	} {
		_, errOut, code := run(t, "", args...)
		assert.Equal(t, exitUsage, code, "%v: exit code", args)
		assert.NotEmpty(t, errOut, "%v: no message on stderr", args)
	}
}

// TestRunRedisDesigns runs `rlcheck run` on a short scenario with every
// Redis-backed library and hand-written design, each on its embedded Redis:
// the real run and the prediction both finish, and every strategy has its
// rows. Without --seeds the prediction takes 100 seeds of them and says how
// far it got.
func TestRunRedisDesigns(t *testing.T) {
	var names []string
	for _, name := range catalog.AuditStrategyNames() {
		if st, _ := catalog.Lookup(name); st.Costly || st.NeedsRedis {
			names = append(names, name)
		}
	}
	require.Len(t, names, 8, "Redis-backed strategies in %v", catalog.AuditStrategyNames())
	path := filepath.Join(t.TempDir(), "short.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`name: short
rules: [3/100ms]
strategies: [combined]
callers: 6
arrivals: {pattern: all-at-once}
call_duration: 0
lateness: uniform(100us, 1ms)
seed: 1
`), 0o644))
	out, errOut, code := run(t, "", "run", path, "--seeds", "5", "--strategies", strings.Join(names, ","))
	require.Contains(t, []int{exitOK, exitViolations}, code, "exit code; stderr %q", errOut)
	assert.Contains(t, out, "prediction: virtual clock over seeds 1..5")
	for _, name := range names {
		assert.Regexp(t, regexp.MustCompile(`(?m)^ *`+name+` +\d+ +(\d+|-) `), out, "no run row for %s", name)
		assert.Regexp(t, regexp.MustCompile(`(?m)^`+name+` +\d/1 +\d+% +3/100ms `), out, "no prediction row for %s", name)
	}
	assert.Contains(t, errOut, "predicting over 5 seeds; "+strings.Join(names[:len(names)-1], ", ")+" run every try on an embedded Redis")
	assert.Contains(t, errOut, fmt.Sprintf("prediction: %d of %d runs", 5*len(names), 5*len(names)))

	out, errOut, code = run(t, "", "run", path, "--strategies", "redis-rate")
	require.Contains(t, []int{exitOK, exitViolations}, code, "exit code; stderr %q", errOut)
	assert.Contains(t, out, "prediction: virtual clock over seeds 1..100", "default seeds of a costly strategy")
	assert.Contains(t, errOut, "prediction: 10 of 100 runs\n")
}

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

// raceEnabled skips the long simulations under the race detector, which
// slows every coroutine switch tenfold.
var raceEnabled bool

func TestSimulateGolden(t *testing.T) {
	tests := []struct {
		golden string
		long   bool
		args   []string
	}{
		{"seed.txt", false, []string{"simulate", "../../scenarios/seed.yaml"}},
		{"seed.json", false, []string{"simulate", "../../scenarios/seed.yaml", "--format", "json"}},
		{"seed-lateness-0.txt", false, []string{"simulate", "seed", "--lateness", "0"}},
		{"seed-waits.txt", false, []string{"simulate", "seed", "--waits"}},
		{"seed-runs-1000.txt", true, []string{"simulate", "seed", "--runs", "1000"}},
		{"seed-runs-1000.json", true, []string{"simulate", "seed", "--runs", "1000", "--format", "json"}},
		{"fleet.json", false, []string{"simulate", "fleet", "--format", "json"}},
		{"cancellation.txt", false, []string{"simulate", "cancellation"}},
		{"cancellation.json", false, []string{"simulate", "cancellation", "--format", "json"}},
		{"gate-order.json", false, []string{"simulate", "gate-order", "--format", "json"}},
		{"api-contract.json", true, []string{"simulate", "api-contract", "--format", "json"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			if tt.long && (testing.Short() || raceEnabled) {
				t.Skip("long simulation")
			}
			out, errOut, code := run(t, "", tt.args...)
			require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
			require.Empty(t, errOut, "stderr")
			golden.Assert(t, filepath.Join("simulate", tt.golden), out)
		})
	}
}

func TestSimulateTwiceIsByteIdentical(t *testing.T) {
	a, _, _ := run(t, "", "simulate", "seed", "--format", "json")
	b, _, _ := run(t, "", "simulate", "seed", "--format", "json")
	require.NotEmpty(t, a, "simulate printed nothing")
	require.Equal(t, a, b, "two runs of one scenario and seed differ")
	c, _, _ := run(t, "", "simulate", "seed", "--format", "json", "--seed", "2")
	assert.NotEqual(t, a, c, "seeds 1 and 2 gave the same output")
}

// TestSimulateLogAgreesWithCheck pipes each strategy's send log into
// rlcheck check and compares its counts with the simulator's.
func TestSimulateLogAgreesWithCheck(t *testing.T) {
	for _, scn := range []string{"seed", "gate-order"} {
		out, errOut, code := run(t, "", "simulate", scn, "--format", "json")
		require.Equal(t, exitOK, code, "%s: exit code; stderr %q", scn, errOut)
		var sim struct {
			Strategies []struct {
				Name  string
				Sends int
				Rules []struct {
					Limit      int
					Window     string
					Violations int64
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &sim), out)
		for _, st := range sim.Strategies {
			var rules []string
			var total int64
			for _, r := range st.Rules {
				rules = append(rules, strings.Join([]string{itoa(r.Limit), r.Window}, "/"))
				total += r.Violations
			}
			log, table, code := run(t, "", "simulate", scn, "--strategy", st.Name, "--log", "-")
			require.Equal(t, exitOK, code, "%s %s: exit code; stderr %q", scn, st.Name, table)
			require.Contains(t, table, st.Name, "%s %s: the table on stderr", scn, st.Name)
			require.Equal(t, st.Sends, strings.Count(log, "\n"), "%s %s: log lines, against the sends", scn, st.Name)
			chk, _, code := run(t, log, "check", "--rules", strings.Join(rules, ","), "--format", "json", "-")
			want := exitOK
			if total > 0 {
				want = exitViolations
			}
			require.Equal(t, want, code, "%s %s: check exit code for %d violations", scn, st.Name, total)
			var rep struct {
				Sends int
				Rules []struct{ Violations int64 }
			}
			require.NoError(t, json.Unmarshal([]byte(chk), &rep), chk)
			require.Equal(t, st.Sends, rep.Sends, "%s %s: sends check read, against those simulate made", scn, st.Name)
			require.Len(t, rep.Rules, len(st.Rules), "%s %s: rules", scn, st.Name)
			for i, r := range st.Rules {
				assert.Equal(t, r.Violations, rep.Rules[i].Violations, "%s %s rule %d: check's count, against simulate's", scn, st.Name, i)
			}
		}
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestSimulateLogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sends.txt")
	out, errOut, code := run(t, "", "simulate", "seed", "--strategy", "sequential", "--log", path)
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	require.Contains(t, out, "sequential", "the table on stdout")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 30, "log lines")
	require.Equal(t, "0.000000000", lines[0], "first line")
	for _, l := range lines {
		_, frac, _ := strings.Cut(l, ".")
		require.Len(t, frac, 9, "line %q has not 9 fractional digits", l)
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ncalers: 4\n"), 0o644))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"simulate"}, "simulate takes one scenario"},
		{[]string{"simulate", bad}, `bad.yaml:4: unknown field "calers"`},
		{[]string{"simulate", "no-such-scenario.yaml"}, "no-such-scenario.yaml"},
		{[]string{"simulate", "seed", "--lateness", "soon"}, "--lateness"},
		{[]string{"simulate", "seed", "--strategy", "redis-please"}, "--strategy"},
		{[]string{"simulate", "seed", "--strategies", "fastest"}, `unknown strategy "fastest"`},
		{[]string{"simulate", "seed", "--format", "yaml"}, "--format"},
		{[]string{"simulate", "seed", "--runs", "x"}, "runs"},
	}
	for _, tt := range tests {
		out, errOut, code := run(t, "", tt.args...)
		assert.Equal(t, exitUsage, code, "%v: exit code", tt.args)
		assert.Empty(t, out, "%v: stdout", tt.args)
		assert.Contains(t, errOut, tt.want, "%v: stderr", tt.args)
	}
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/golden"
)

func TestAuditGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"5-1s-12-3s.txt", []string{"audit", "--rules", "5/1s,12/3s", "--strategies", "xrate-chained,uber-ratelimit,redis-rate,redis-fixed-window,redis-two-trips", "--seeds", "3", "--verify", "10"}},
		{"5-1s-12-3s.json", []string{"audit", "--rules", "5/1s,12/3s", "--format", "json", "--strategies", "xrate-chained,xrate-reserve-all,uber-ratelimit"}},
		{"exact-burst-1.txt", []string{"audit", "--rules", "5/1s", "--burst", "1", "--slack", "0", "--lateness", "0", "--op-cost", "0", "--no-search",
			"--strategies", "xrate-chained,xrate-reserve-all,uber-ratelimit,throttled-mem,redis-rate,ulule-redis,redis-fixed-window"}},
		{"closed.txt", []string{"audit", "--rules", "5/1s", "--boundary", "closed", "--strategies", "xrate-chained", "--seeds", "2", "--verify", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
			require.Empty(t, errOut, "stderr")
			golden.Assert(t, filepath.Join("audit", tt.golden), out)
		})
	}
}

// TestAuditJSONSafe checks the acceptance point through the command: every
// library strategy gets a suggested setting with no violation anywhere.
func TestAuditJSONSafe(t *testing.T) {
	out, errOut, code := run(t, "", "audit", "--rules", "5/1s,12/3s", "--format", "json", "--seeds", "2", "--verify", "5",
		"--strategies", "xrate-chained,xrate-reserve-all,uber-ratelimit,throttled-mem")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	var rep struct {
		Strategies []struct {
			Name string
			Safe *struct {
				Workloads []struct {
					Workload           string
					RunsWithViolations int `json:"runs_with_violations"`
					Rules              []struct {
						Violations  int64
						MaxInWindow int64 `json:"max_in_window"`
						Limit       int64
					}
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Strategies, 4, "strategies audited")
	for _, s := range rep.Strategies {
		if !assert.NotNil(t, s.Safe, "%s: no safe setting", s.Name) {
			continue
		}
		for _, w := range s.Safe.Workloads {
			assert.Zero(t, w.RunsWithViolations, "%s on %s: runs with violations in %+v", s.Name, w.Workload, w)
			for i, r := range w.Rules {
				assert.Zero(t, r.Violations, "%s on %s: violations of rule %d in %+v", s.Name, w.Workload, i, w)
				assert.LessOrEqual(t, r.MaxInWindow, r.Limit, "%s on %s: most in one window of rule %d, in %+v", s.Name, w.Workload, i, w)
			}
		}
	}
}

func TestAuditUsage(t *testing.T) {
	for _, args := range [][]string{
		{"audit"},
		{"audit", "--rules", "5/0s"},
		{"audit", "--rules", "5/1s", "--format", "xml"},
		{"audit", "--rules", "5/1s", "--strategies", "combined"},
		{"audit", "--rules", "5/1s", "--burst", "-1"},
		{"audit", "--rules", "5/1s", "--seeds", "0"},
		{"audit", "--rules", "5/1s", "--lateness", "soon"},
		{"audit", "--rules", "5/1s", "extra"},
	} {
		_, errOut, code := run(t, "", args...)
		assert.Equal(t, exitUsage, code, "%v: exit code; stderr %q", args, errOut)
		assert.True(t, strings.HasPrefix(errOut, "rlcheck: "), "%v: stderr %q does not start with \"rlcheck: \"", args, errOut)
	}
}

// TestAuditUnexercisedIsNotSafe is #33.10 through the command: the audit
// of 10/s,500/min never filled the minute window (30/500 on every
// workload) and still suggested burst 2, whose minute bucket admits 501 in
// some minute. Now no suggestion has an analytic worst case over a limit,
// and each rule of each suggestion is reached, at its bound or proved.
func TestAuditUnexercisedIsNotSafe(t *testing.T) {
	out, errOut, code := run(t, "", "audit", "--rules", "10/s,500/min", "--strategies", "xrate-chained,redis-rate", "--seeds", "1", "--verify", "1")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	assert.NotContains(t, out, "rate.NewLimiter(rate.Limit(500/60.0), 2)", "burst 2 on 500/min suggested as safe")
	assert.NotContains(t, out, "Period: time.Minute, Burst: 2}", "burst 2 on 500/min suggested as safe")
	_, safe, ok := strings.Cut(out, "suggested safe settings")
	require.True(t, ok, out)
	for _, name := range []string{"xrate-chained", "redis-rate"} {
		i := strings.Index(safe, "\n"+name+" ")
		require.GreaterOrEqual(t, i, 0, "%s suggested:\n%s", name, safe)
		line, _, _ := strings.Cut(safe[i+1:], "\n")
		assert.NotContains(t, line, "none found", line)
		assert.Regexp(t, `(reached|at bound ≤ \d+|proved ≤ \d+).*, (reached|proved ≤ 500)`, line, "each rule reached or proved")
	}
}

// TestAuditProviderKinds: a rule that names a kind is audited against that
// provider and searched as the sliding rule that implies it,
// --provider-kinds judges the same sends as each kind, and refuses rules
// that already name one.
func TestAuditProviderKinds(t *testing.T) {
	out, errOut, code := run(t, "", "audit", "--rules", "5/1s fixed", "--strategies", "redis-fixed-window", "--lateness", "0", "--op-cost", "0", "--seeds", "1")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	assert.Contains(t, out, "analytic worst cases are for sliding rules only")
	assert.Contains(t, out, "5/1s fixed kept as 5/1s")
	assert.Contains(t, out, "\nredis-fixed-window  N/2, N per W ")

	out, errOut, code = run(t, "", "audit", "--rules", "5/1s", "--provider-kinds", "--strategies", "redis-rate", "--no-search", "--seeds", "1",
		"--lateness", "0", "--op-cost", "0", "--format", "json")
	require.Equal(t, exitOK, code, "exit code; stderr %q", errOut)
	var rep struct {
		Strategies []struct {
			Workloads []struct {
				Kinds []struct {
					Kind  string
					Rules []struct{ Violations int64 }
				} `json:"provider_kinds"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Strategies, 1)
	for _, w := range rep.Strategies[0].Workloads {
		require.Len(t, w.Kinds, 3, out)
		assert.Equal(t, "bucket", w.Kinds[2].Kind)
		assert.Zero(t, w.Kinds[2].Rules[0].Violations, "redis-rate against a bucket of its own parameters")
	}

	_, errOut, code = run(t, "", "audit", "--rules", "5/1s burst 5", "--provider-kinds")
	assert.Equal(t, exitUsage, code, "stderr %q", errOut)
	assert.Contains(t, errOut, "give rules without a kind")
}

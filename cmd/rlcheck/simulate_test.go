package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, filepath.Join("simulate", tt.golden), out)
		})
	}
}

func TestSimulateTwiceIsByteIdentical(t *testing.T) {
	a, _, _ := run(t, "", "simulate", "seed", "--format", "json")
	b, _, _ := run(t, "", "simulate", "seed", "--format", "json")
	if a != b || a == "" {
		t.Fatal("two runs of one scenario and seed differ")
	}
	c, _, _ := run(t, "", "simulate", "seed", "--format", "json", "--seed", "2")
	if c == a {
		t.Fatal("seeds 1 and 2 gave the same output")
	}
}

// TestSimulateLogAgreesWithCheck pipes each strategy's send log into
// rlcheck check and compares its counts with the simulator's.
func TestSimulateLogAgreesWithCheck(t *testing.T) {
	for _, scn := range []string{"seed", "gate-order"} {
		out, _, code := run(t, "", "simulate", scn, "--format", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d", scn, code)
		}
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
		if err := json.Unmarshal([]byte(out), &sim); err != nil {
			t.Fatal(err)
		}
		for _, st := range sim.Strategies {
			var rules []string
			var total int64
			for _, r := range st.Rules {
				rules = append(rules, strings.Join([]string{itoa(r.Limit), r.Window}, "/"))
				total += r.Violations
			}
			log, table, code := run(t, "", "simulate", scn, "--strategy", st.Name, "--log", "-")
			if code != 0 || !strings.Contains(table, st.Name) || strings.Count(log, "\n") != st.Sends {
				t.Fatalf("%s %s: exit %d, %d log lines for %d sends, table on stderr %q", scn, st.Name, code, strings.Count(log, "\n"), st.Sends, table)
			}
			chk, _, code := run(t, log, "check", "--rules", strings.Join(rules, ","), "--format", "json", "-")
			if want := map[bool]int{true: 1, false: 0}[total > 0]; code != want {
				t.Fatalf("%s %s: check exit %d, want %d", scn, st.Name, code, want)
			}
			var rep struct {
				Sends int
				Rules []struct{ Violations int64 }
			}
			if err := json.Unmarshal([]byte(chk), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Sends != st.Sends {
				t.Fatalf("%s %s: check read %d sends, simulate made %d", scn, st.Name, rep.Sends, st.Sends)
			}
			for i, r := range st.Rules {
				if rep.Rules[i].Violations != r.Violations {
					t.Errorf("%s %s rule %d: check counts %d, simulate %d", scn, st.Name, i, rep.Rules[i].Violations, r.Violations)
				}
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
	out, _, code := run(t, "", "simulate", "seed", "--strategy", "sequential", "--log", path)
	if code != 0 || !strings.Contains(out, "sequential") {
		t.Fatalf("exit %d, %q", code, out)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 30 || lines[0] != "0.000000000" {
		t.Fatalf("log %q...", lines[:min(3, len(lines))])
	}
	for _, l := range lines {
		if _, frac, _ := strings.Cut(l, "."); len(frac) != 9 {
			t.Fatalf("line %q has not 9 fractional digits", l)
		}
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ncalers: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 naming %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

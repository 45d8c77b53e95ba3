package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestRunCommand runs the seed scenario twice, 20 times faster than real
// time. Real-clock violation counts depend on the machine, so the exit code
// may be 0 or 1; the layout of the report may not vary.
func TestRunCommand(t *testing.T) {
	out, errOut, code := run(t, "", "run", "../../scenarios/seed.yaml", "--speed", "20", "--repeat", "2", "--seeds", "20",
		"--strategies", "sequential,combined,gated")
	if code != exitOK && code != exitViolations {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "run 2 of 2...") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
	for _, want := range []string{
		"scenario seed on the real clock: rules 5/50ms, 12/150ms, 30 callers, speed 20, 2 run(s)",
		"prediction: virtual clock over seeds 1..20",
		"run 1 of 2:", "run 2 of 2:",
		"measured per run  predicted p5 p50 p95 max  within p5-p95",
		"timer lateness (each completed sleep's overshoot",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, name := range []string{"sequential", "combined", "gated"} {
		row := regexp.MustCompile(`(?m)^` + name + ` +\d/2 +\d+% +5/50ms +\d+ \d+ +\d+ \d+ \d+ \d+ +\d/2 *$`)
		if !row.MatchString(out) {
			t.Errorf("no summary row for %s:\n%s", name, out)
		}
	}
	if (code == exitViolations) != strings.Contains(out, "strategies that must never violate did") {
		t.Errorf("exit %d does not match the report:\n%s", code, out)
	}
}

func TestRunCommandJSON(t *testing.T) {
	out, errOut, code := run(t, "", "run", "seed", "--speed", "20", "--seeds", "5", "--strategies", "combined", "--format", "json")
	if code != exitOK && code != exitViolations {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
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
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if rep.Scenario != "seed" || rep.Speed != 20 || len(rep.Runs) != 1 || rep.Runs[0].Strategies[0].Sent != 30 {
		t.Errorf("report %+v", rep)
	}
}

func TestRunCommandMargin(t *testing.T) {
	out, errOut, code := run(t, "", "run", "seed", "--speed", "20", "--seeds", "5", "--strategies", "combined", "--margin", "5ms")
	if code != exitOK && code != exitViolations {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "margin: the limiters enforce every window 5ms wider") || !strings.Contains(out, "rules 5/50ms, 12/150ms") {
		t.Errorf("output:\n%s", out)
	}
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
		if _, errOut, code := run(t, "", args...); code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

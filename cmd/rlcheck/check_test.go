package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			if code != tt.code || errOut != "" {
				t.Fatalf("exit %d (want %d), stderr %q", code, tt.code, errOut)
			}
			golden(t, filepath.Join("check", tt.golden), out)
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
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.log, code, tt.code)
		}
		var res struct {
			Sends int64
			Rules []struct {
				Rule       string
				Window     string
				Violations int64
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		if res.Sends != 30 || len(res.Rules) != 2 || res.Rules[0].Window != "1s" || res.Rules[1].Window != "3s" {
			t.Fatalf("%s: %+v", tt.log, res)
		}
		for i, w := range tt.want {
			if res.Rules[i].Violations != w {
				t.Errorf("%s: %s has %d violations, want %d", tt.log, res.Rules[i].Rule, res.Rules[i].Violations, w)
			}
		}
	}
}

func TestCheckStdin(t *testing.T) {
	data, err := os.ReadFile(seqLog)
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := run(t, string(data), "check", "--rules", "5/1s,12/3s", "-")
	if code != 1 || !strings.Contains(out, "FAIL: 2 violations (5/1s: 2)") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestCheckErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
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
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.HasPrefix(errOut, "rlcheck: ") || !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q\nwant it to contain %q", errOut, tt.want)
			}
		})
	}
}

func TestCheckSkipInvalid(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.txt")
	os.WriteFile(p, []byte("0\n0.1\nbad\n0.2\n"), 0o644)
	out, _, code := run(t, "", "check", "--rules", "2/1s", "--skip-invalid", p)
	if code != 1 || !strings.Contains(out, "skipped 1 invalid line of") || !strings.Contains(out, ":3: not a timestamp") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
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
			if code != tt.code || errOut != "" {
				t.Fatalf("exit %d (want %d), stderr %q\n%s", code, tt.code, errOut, out)
			}
			golden(t, filepath.Join("check", tt.golden), out)
		})
	}
}

func TestCheckContractAndAccessLog(t *testing.T) {
	bunched := "../../sendlog/accesslog/testdata/seconds/bunched.log"
	out, errOut, code := run(t, "", "check", "--input-format", "nginx", "--rules", "5/1s", bunched)
	if code != 1 || !strings.Contains(out, "5/1s  5           10") {
		t.Errorf("bunched: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, _, code = run(t, "", "check", "--contract", "../../testdata/contracts/api.yaml", "--input-format", "nginx", bunched)
	if code != 0 || !strings.Contains(out, "10000/24h") || !strings.Contains(out, "in flight: at most 4 allowed") {
		t.Errorf("contract: exit %d\n%s", code, out)
	}
	_, errOut, code = run(t, "", "check", "--input-format", "nginx", "--rules", "5/1s", "--status", "5xx", bunched)
	if code != 2 || !strings.Contains(errOut, "the filters left out all 10 requests") {
		t.Errorf("filtered: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "", "check", "--rules", "5/1s", "--status", "5xx", seqLog)
	if code != 2 || !strings.Contains(errOut, "give --input-format nginx or apache") {
		t.Errorf("filter on a plain log: exit %d, stderr %q", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(bad, []byte("rules: [5/1s]\nmax_inflight: 3\n"), 0o644)
	_, errOut, code = run(t, "", "check", "--contract", bad, seqLog)
	if code != 2 || !strings.Contains(errOut, bad+":2:") || !strings.Contains(errOut, "max_inflight") {
		t.Errorf("bad contract: exit %d, stderr %q", code, errOut)
	}
}

func TestCheckGitHubActions(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", summary)
	out, _, code := run(t, "", "check", "--rules", "5/1s,12/3s", seqLog)
	if code != 1 || !strings.HasPrefix(out, "::error file=") {
		t.Errorf("under GITHUB_ACTIONS: exit %d\n%s", code, out)
	}
	md, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(md), "5/1s") {
		t.Errorf("step summary %q, %v", md, err)
	}
	out, _, _ = run(t, "", "check", "--format", "text", "--rules", "5/1s", seqLog)
	if !strings.Contains(out, "FAIL: 2 violations") {
		t.Errorf("--format text under GITHUB_ACTIONS:\n%s", out)
	}
	out, _, code = run(t, "", "check", "--format", "junit", "--rules", "5/1s,12/3s", seqLog)
	if code != 1 || !strings.Contains(out, "<testsuite") || !strings.Contains(out, "<failure") {
		t.Errorf("junit: exit %d\n%s", code, out)
	}
}

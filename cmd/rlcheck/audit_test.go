package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestAuditGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"5-1s-12-3s.txt", []string{"audit", "--rules", "5/1s,12/3s"}},
		{"5-1s-12-3s.json", []string{"audit", "--rules", "5/1s,12/3s", "--format", "json"}},
		{"exact-burst-1.txt", []string{"audit", "--rules", "5/1s", "--burst", "1", "--slack", "0", "--lateness", "0", "--op-cost", "0", "--no-search"}},
		{"closed.txt", []string{"audit", "--rules", "5/1s", "--boundary", "closed", "--strategies", "xrate-chained", "--seeds", "2", "--verify", "4"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, errOut, code := run(t, "", tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden(t, filepath.Join("audit", tt.golden), out)
		})
	}
}

// TestAuditJSONSafe checks the acceptance point through the command: every
// library strategy gets a suggested setting with no violation anywhere.
func TestAuditJSONSafe(t *testing.T) {
	out, _, code := run(t, "", "audit", "--rules", "5/1s,12/3s", "--format", "json", "--seeds", "2", "--verify", "5")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		Strategies []struct {
			Name string
			Safe *struct {
				Workloads []struct {
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
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Strategies) != 3 {
		t.Fatalf("%d strategies", len(rep.Strategies))
	}
	for _, s := range rep.Strategies {
		if s.Safe == nil {
			t.Errorf("%s: no safe setting", s.Name)
			continue
		}
		for _, w := range s.Safe.Workloads {
			for _, r := range w.Rules {
				if w.RunsWithViolations != 0 || r.Violations != 0 || r.MaxInWindow > r.Limit {
					t.Errorf("%s: %+v", s.Name, w)
				}
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
		if code != exitUsage || !strings.HasPrefix(errOut, "rlcheck: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

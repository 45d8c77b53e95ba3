package layout

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/rlcheck/rlcheck/"

// deps maps every package of the module (tests aside) to the set of the
// packages it imports, directly or not.
func deps(t *testing.T) map[string]map[string]bool {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the packages' imports")
	}
	out, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", module+"...").Output()
	require.NoError(t, err, "go list")
	all := map[string]map[string]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		set := map[string]bool{}
		for _, d := range fields[1:] {
			set[d] = true
		}
		all[fields[0]] = set
	}
	return all
}

// under reports whether pkg is dir or a package beneath it.
func under(pkg, dir string) bool {
	return pkg == module+dir || strings.HasPrefix(pkg, module+dir+"/")
}

// TestLayering: each package imports none of the packages above it.
func TestLayering(t *testing.T) {
	all := deps(t)
	forbidden := map[string][]string{
		"serve":         {"simulate"},
		"realrun":       {"simulate"},
		"clock/virtual": {"simulate", "strategies", "workload", "scenarios"},
		"workload":      {"simulate", "strategies", "scenarios", "clock/virtual"},
		"scenarios":     {"simulate"},
		"adapter":       {"simulate", "strategies", "scenarios", "audit", "clock"},
		"strategies":    {"simulate", "scenarios", "realrun", "audit"},
		"sqlcheck":      {"logcheck", "sendlog", "simulate"},
		"report":        {"logcheck", "sendlog", "merge", "simulate"},
		"merge":         {"logcheck", "sendlog", "simulate"},
		"infer":         {"simulate", "strategies", "audit", "realrun", "logcheck"},
		"rlheader":      {"infer", "serve", "checker", "sendlog", "logcheck", "simulate"},
	}
	for pkg, above := range forbidden {
		for p, ds := range all {
			if !under(p, pkg) {
				continue
			}
			for d := range ds {
				for _, a := range above {
					assert.False(t, under(d, a), "%s imports %s", p, d)
				}
			}
		}
	}
	_, listed := all[module+"clock/virtual"]
	require.True(t, listed, "clock/virtual among the packages listed")
	serveDeps := all[module+"serve"]
	assert.False(t, serveDeps[module+"logcheck"], "serve imports logcheck: its verdict is the Judge it is given")
	assert.False(t, serveDeps[module+"infer"], "serve imports infer: the header formats they share are rlheader's")
	for _, pkg := range testSupport {
		testSupportBelowEverything(t, all, pkg, pkg == "internal/oracle")
	}
}

// testSupport are the packages only tests import: the oracle, and the
// differential tests' cases built on it, and the switch between the
// everyday and the long run.
var testSupport = []string{"internal/oracle", "internal/difftest", "internal/testrun"}

// testSupportBelowEverything: no package but tests (and other test
// support) imports a test-support package, and the oracle (standalone) imports no package of the module,
// so that it shares no code with what it judges.
func testSupportBelowEverything(t *testing.T, all map[string]map[string]bool, pkg string, standalone bool) {
	t.Helper()
	_, listed := all[module+pkg]
	require.True(t, listed, "%s among the packages listed", pkg)
	for p, ds := range all {
		for d := range ds {
			if standalone && p == module+pkg {
				assert.False(t, strings.HasPrefix(d, module), "%s imports %s", p, d)
			}
			assert.False(t, under(d, pkg) && !slices.ContainsFunc(testSupport, func(s string) bool { return under(p, s) }),
				"%s imports %s", p, d)
		}
	}
}

package layout

import (
	"os/exec"
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
		"strategies":    {"simulate", "scenarios", "realrun", "audit"},
		"sqlcheck":      {"logcheck", "sendlog", "simulate"},
		"report":        {"logcheck", "sendlog", "merge", "simulate"},
		"merge":         {"logcheck", "sendlog", "simulate"},
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
	testSupportBelowEverything(t, all, "internal/oracle")
}

// testSupportBelowEverything: a test-support package imports no package of
// the module (the oracle shares no code with what it judges), and no
// package but tests imports it.
func testSupportBelowEverything(t *testing.T, all map[string]map[string]bool, pkg string) {
	t.Helper()
	_, listed := all[module+pkg]
	require.True(t, listed, "%s among the packages listed", pkg)
	for p, ds := range all {
		for d := range ds {
			if p == module+pkg {
				assert.False(t, strings.HasPrefix(d, module), "%s imports %s", p, d)
			}
			assert.False(t, under(d, pkg), "%s imports %s", p, d)
		}
	}
}

// TestCheckerStandsOnTheCoreTypes: the checker imports no package of the
// module but rule.
func TestCheckerStandsOnTheCoreTypes(t *testing.T) {
	for d := range deps(t)[module+"checker"] {
		if strings.HasPrefix(d, module) {
			assert.Equal(t, module+"rule", d, "checker imports %s", d)
		}
	}
}

// TestSpecimensAreInternal: the audit's specimens (third-party libraries
// and hand-written Redis designs) live under internal/, so no public
// package path names them and the compiler keeps them from other modules.
func TestSpecimensAreInternal(t *testing.T) {
	all := deps(t)
	found := 0
	for p := range all {
		if strings.Contains(p, "specimens") || strings.Contains(p, "handwritten") || strings.HasSuffix(p, "/libs") || strings.Contains(p, "/libs/") {
			found++
			assert.True(t, under(p, "internal/specimens"), "specimen package %s outside internal/specimens", p)
		}
	}
	assert.Positive(t, found, "specimen packages listed")
}

package release

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tools, pinned.
const (
	actionlint        = "github.com/rhysd/actionlint/cmd/actionlint"
	actionlintVersion = "v1.7.12"
	goreleaser        = "github.com/goreleaser/goreleaser/v2"
	goreleaserVersion = "v2.15.1"
)

const root = "../.."

// ToolDir is where the tools are installed: ${XDG_CACHE_HOME:-$HOME/.cache}/
// rlcheck-test-tools/NAME-VERSION on Linux, as .ci/run does.
func toolDir(t *testing.T, name, version string) string {
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	return filepath.Join(cache, "rlcheck-test-tools", name+"-"+version)
}

// tool returns the path of pkg's command at version. When install is set
// it is installed with "go install" into toolDir on first use, so later
// runs cost nothing; when it cannot be (no module proxy), or is not there
// and install is not set, the test skips with a message; under CI=true a
// tool it should install and cannot is a failure.
func tool(t *testing.T, pkg, version string, install bool) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs and runs a release tool")
	}
	name := path.Base(pkg)
	if regexp.MustCompile(`^v[0-9]+$`).MatchString(name) {
		name = path.Base(path.Dir(pkg))
	}
	dir := toolDir(t, name, version)
	bin := filepath.Join(dir, name)
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	msg := pkg + "@" + version + " is not installed; GOBIN=" + dir + " go install " + pkg + "@" + version + " installs it (.ci/run does)"
	if install {
		cmd := exec.Command("go", "install", pkg+"@"+version)
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err == nil {
			return bin
		}
		msg = "cannot install " + pkg + "@" + version + ": " + strings.TrimSpace(string(out))
	}
	if install && os.Getenv("CI") == "true" {
		t.Fatal(msg) // a missing tool in CI, not an assertion: elsewhere the test skips
	}
	t.Skip("SKIPPING: " + msg)
	return ""
}

// TestGoreleaserConfig: goreleaser accepts .goreleaser.yaml. goreleaser
// takes minutes to build, so the test never installs it: .ci/run tries to,
// and without it the test skips even under CI.
func TestGoreleaserConfig(t *testing.T) {
	bin := tool(t, goreleaser, goreleaserVersion, false)
	cmd := exec.Command(bin, "check", "--config", ".goreleaser.yaml")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestGoreleaserTargets: the config builds the six targets .ci/run
// cross-builds, static.
func TestGoreleaserTargets(t *testing.T) {
	cfg, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	require.NoError(t, err)
	ci, err := os.ReadFile(filepath.Join(root, ".ci/run"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "goos: [linux, darwin, windows]")
	assert.Contains(t, string(cfg), "goarch: [amd64, arm64]")
	assert.Contains(t, string(cfg), "- CGO_ENABLED=0")
	assert.Contains(t, string(ci), "for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do")
	assert.Contains(t, string(ci), "install_tool "+goreleaser+" "+goreleaserVersion, ".ci/run installs the goreleaser this package runs")
	assert.Contains(t, string(ci), "install_tool "+actionlint+" "+actionlintVersion)
	for _, v := range []string{"version", "revision", "revisionTime"} {
		assert.Contains(t, string(cfg), "-X github.com/rlcheck/rlcheck/buildinfo."+v+"=", "the ldflags name buildinfo's variables")
	}
}

// workflowRepo lays out a repository holding action.yml at its root and
// the given workflows, for actionlint.
func workflowRepo(t *testing.T, workflows map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755))
	action, err := os.ReadFile(filepath.Join(root, "action.yml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "action.yml"), action, 0o644))
	for name, body := range workflows {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ".github", "workflows", name), []byte(body), 0o644))
	}
	return dir
}

func lint(t *testing.T, bin, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, "-no-color")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// readmeWorkflow is the README's workflow that uses the action, pointed at
// the local copy so that actionlint reads its inputs.
func readmeWorkflow(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(block[1], "uses: rlcheck/rlcheck@") {
			return regexp.MustCompile(`uses: rlcheck/rlcheck@\S+`).ReplaceAllString(block[1], "uses: ./")
		}
	}
	require.FailNow(t, "README.md shows no workflow that uses rlcheck/rlcheck")
	return ""
}

// TestActionLint: actionlint finds nothing wrong in the README's workflow
// or in one that gives every input of action.yml, and it does read the
// action's inputs: a misspelt one is reported.
func TestActionLint(t *testing.T) {
	bin := tool(t, actionlint, actionlintVersion, true)
	every := `name: every input
on: [push]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./
        with:
          files: |
            logs/*.csv
            more.csv.gz
          rules: 10/s,500/min
          contract: api.yaml
          args: --key-col tenant
          version: v0.1.0
          go-version: "1.26"
`
	out, err := lint(t, bin, workflowRepo(t, map[string]string{"readme.yml": readmeWorkflow(t), "every.yml": every}))
	assert.NoError(t, err, "%s", out)

	wrong := strings.Replace(every, "rules: ", "rulez: ", 1)
	out, err = lint(t, bin, workflowRepo(t, map[string]string{"wrong.yml": wrong}))
	assert.Error(t, err)
	assert.Contains(t, out, `input "rulez" is not defined in action "rlcheck check"`)

	missing := strings.Replace(every, "          files: |\n            logs/*.csv\n            more.csv.gz\n", "", 1)
	out, err = lint(t, bin, workflowRepo(t, map[string]string{"missing.yml": missing}))
	assert.Error(t, err)
	assert.Contains(t, out, `missing input "files"`)
}

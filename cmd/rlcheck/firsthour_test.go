package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/shlex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMisspelledFlagsGetTheFlagMeant: a misspelled flag is answered, as a
// misspelled command is, with the one the user most likely meant.
func TestMisspelledFlagsGetTheFlagMeant(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--rulse", "5/1s", "x.csv"}, "did you mean --rules?"},
		{[]string{"check", "--rules", "5/1s", "--key-column", "k", "x.csv"}, "did you mean --key-col?"},
		{[]string{"infer", "--time-column", "t", "x.csv"}, "did you mean --time-col?"},
	} {
		_, errOut, code := run(t, "", c.args...)
		assert.Equal(t, exitUsage, code, c.args)
		assert.Contains(t, errOut, c.want, c.args)
	}
}

// TestReadmeInstallsFromAClone: the README's install command, run in the
// clone as a new user would, gives a binary that prints what the README's
// first example shows.
func TestReadmeInstallsFromAClone(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("builds the command")
	}
	// In parallel with the rest: the build is another process's work. So
	// the clone's root is the command's directory, not the test's.
	t.Parallel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	const install = "go install ./cmd/rlcheck"
	require.Contains(t, string(readme), "```sh\n"+install+"\n```", "the README's install command")
	bin := t.TempDir()
	cmd := exec.Command("go", strings.Fields(install)[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	exs := docExamples(string(readme))
	require.NotEmpty(t, exs)
	first := exs[0]
	args, err := shlex.Split(first.cmd)
	require.NoError(t, err)
	run := exec.Command(filepath.Join(bin, "rlcheck"), args[1:]...)
	run.Dir = root
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	_ = run.Run()
	assert.Equal(t, first.want, stdout.String()+stderr.String(), "the installed binary prints what the README shows for\n$ %s", first.cmd)
}

// TestJSONNamesTheSkippedLines: JSON says which lines --skip-invalid
// passed over, as the text report does, not only how many.
func TestJSONNamesTheSkippedLines(t *testing.T) {
	out, _, code := run(t, "1\nx\n2\ny\n3\n", "check", "--rules", "5/1s", "--skip-invalid", "--format", "json", "-")
	require.Equal(t, exitOK, code, out)
	var doc struct {
		Files []struct {
			Skipped int64 `json:"skipped_lines"`
			First   []struct {
				Line  int64  `json:"line"`
				Error string `json:"error"`
			} `json:"skipped_first"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Len(t, doc.Files, 1)
	assert.Equal(t, int64(2), doc.Files[0].Skipped)
	require.Len(t, doc.Files[0].First, 2)
	assert.Equal(t, []int64{2, 4}, []int64{doc.Files[0].First[0].Line, doc.Files[0].First[1].Line})
	assert.Contains(t, doc.Files[0].First[0].Error, `"x"`)
}

// TestRecordingProxyNeedsNoRule: the recording proxy docs/serve.md shows,
// a cap on calls in flight and no rule, runs and records what it forwards.
func TestRecordingProxyNeedsNoRule(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	log := filepath.Join(t.TempDir(), "requests.csv")
	out, errOut, code := run(t, "", "serve", "--max-in-flight", "1000", "--upstream", up.URL, "--log", log,
		"--duration", "100ms", "--listen", "127.0.0.1:0")
	assert.Equal(t, exitOK, code, "stdout %q, stderr %q", out, errOut)
	_, err := os.Stat(log)
	assert.NoError(t, err, "the log is written")
}

// TestContractHoldsTheWholeSetup: the contract file names the time column
// and unit, the key column and the cost column, so that the check is the
// contract and the log; a flag overrides the contract's setting.
func TestContractHoldsTheWholeSetup(t *testing.T) {
	t.Chdir("../..")
	out, errOut, code := run(t, "", "check", "--contract", "docs/examples/llm.yaml", "docs/examples/llm-sends.csv")
	assert.Equal(t, exitViolations, code, errOut)
	assert.Contains(t, out, "key-a  90000 tokens/1m  2")
	out, errOut, code = run(t, "", "check", "--contract", "docs/examples/llm.yaml", "--key-col", "model", "--format", "json", "docs/examples/llm-sends.csv")
	assert.Equal(t, exitViolations, code, errOut)
	assert.Contains(t, out, `"key": "gpt-x"`, "the flag's key column, not the contract's")
}

// TestKeysOrderedByClosestApproach: after the failing keys come the clean
// ones closest to a limit, not the alphabetically first: a key at 95% of
// its daily quota is listed before quiet keys, in text and JSON alike.
func TestKeysOrderedByClosestApproach(t *testing.T) {
	var b strings.Builder
	b.WriteString("ts_ms,key\n")
	at := int64(1_767_225_600_000)
	for _, k := range []string{"a-quiet", "b-quiet", "c-fail", "c-fail", "c-fail"} {
		fmt.Fprintf(&b, "%d,%s\n", at, k)
	}
	for i := range 19 { // k-near: 19 of 20 a day
		fmt.Fprintf(&b, "%d,k-near\n", at+int64(i+1)*60_000)
	}
	out, _, code := run(t, b.String(), "check", "--rules", "2/1s,20/1d", "--key-col", "key", "--keys", "2", "-")
	require.Equal(t, exitViolations, code, out)
	assert.Regexp(t, `(?s)c-fail .*k-near .*95%`, out)
	assert.NotContains(t, out, "a-quiet")
	out, _, _ = run(t, b.String(), "check", "--rules", "2/1s,20/1d", "--key-col", "key", "--format", "json", "-")
	assert.Regexp(t, `(?s)"key": "c-fail".*"key": "k-near".*"key": "a-quiet".*"key": "b-quiet"`, out)
	assert.Contains(t, out, `"usage": 0.95`)
}

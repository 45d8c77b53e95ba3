package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/pythontest"
)

func needPython(t *testing.T) { pythontest.Need(t, "the Python adapter's documented runs") }

const adapterPage = "docs/adapters.md"

// TestDocsWithPython runs the page's "console python3" blocks as TestDocs
// runs the console blocks, when python3 is there; -update rewrites them.
func TestDocsWithPython(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs the documented adapter commands")
	}
	needPython(t)
	t.Chdir("../..")
	data, err := os.ReadFile(adapterPage)
	require.NoError(t, err)
	// Only the python3 blocks are examples here.
	md := strings.ReplaceAll(string(data), "```console\n", "```console-elsewhere\n")
	md = strings.ReplaceAll(md, "```console python3\n", "```console\n")
	exs := docExamples(md)
	require.NotEmpty(t, exs)
	// The examples run side by side, as TestDocs runs its own: each waits
	// on its Python program.
	for i := range exs {
		ex := &exs[i]
		t.Run(ex.cmd, func(t *testing.T) {
			t.Parallel()
			ex.got, _ = runDocCommand(ex.cmd)
			ex.ran = true
			if !*update {
				assert.Equal(t, ex.want, ex.got, "%s shows the expected output for\n$ %s", adapterPage, ex.cmd)
			}
		})
	}
	if *update {
		// After the parallel examples are done, before the directory is
		// restored.
		t.Cleanup(func() {
			out := strings.ReplaceAll(rewriteDocs(md, exs), "```console\n", "```console python3\n")
			out = strings.ReplaceAll(out, "```console-elsewhere\n", "```console\n")
			assert.NoError(t, os.WriteFile(adapterPage, []byte(out), 0o644))
		})
	}
}

// exchangeBlock is the page's worked exchange: the text block after the
// line that introduces it.
var exchangeBlock = regexp.MustCompile("(?s)(Interleaved, [^\n]*\n[^\n]*\n\n```text\n)(.*?)(```\n)")

// TestAdapterDocsExchange records the exchange the page shows, with tee on
// both sides of the program, and compares it with the page.
func TestAdapterDocsExchange(t *testing.T) {
	needPython(t)
	if !*update { // with -update, TestDocsWithPython rewrites the same page
		t.Parallel()
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"simulate", filepath.Join(root, "docs/examples/adapter.yaml"), "--exec",
		"tee '" + in + "' | python3 '" + filepath.Join(root, "adapters/python/guide.py") + "' | tee '" + out + "'"}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	sent, err := os.ReadFile(in)
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	var b strings.Builder
	answers := strings.SplitAfter(string(got), "\n")
	b.WriteString("< " + answers[0])
	answers = answers[1:]
	for _, run := range strings.SplitAfter(strings.TrimSuffix(string(sent), "\n"), "\n") {
		b.WriteString("> " + strings.TrimSuffix(run, "\n") + "\n")
		for len(answers) > 0 && answers[0] != "" {
			line := answers[0]
			answers = answers[1:]
			b.WriteString("< " + line)
			if strings.Contains(line, `"done":true`) {
				break
			}
		}
	}
	page := filepath.Join(root, adapterPage)
	data, err := os.ReadFile(page)
	require.NoError(t, err)
	m := exchangeBlock.FindSubmatchIndex(data)
	require.NotNil(t, m, "the worked exchange's block on %s", adapterPage)
	if *update {
		data = append(append(append([]byte{}, data[:m[4]]...), b.String()...), data[m[5]:]...)
		require.NoError(t, os.WriteFile(page, data, 0o644))
		return
	}
	assert.Equal(t, string(data[m[4]:m[5]]), b.String())
}

// TestSimulateExecRefusesWithExit2: a lying or hanging program stops
// simulate with exit status 2 and the line named; no python3 needed.
func TestSimulateExecRefusesWithExit2(t *testing.T) {
	t.Parallel()
	hello := `echo '{"rlcheck_adapter":1,"strategies":["sh"]}'; `
	cases := []struct {
		exec, want string
		more       []string
	}{
		{`echo '{"rlcheck_adapter":2,"strategies":["sh"]}'`, `output line 1: protocol version 2; this rlcheck speaks version 1`, nil},
		{hello + `read line; echo '{"run":1,"call":0,"send_ns":-5}'`, `output line 2 (run 1, seed 1): call 0 sends at -5 ns, before its arrival at 0 ns`, nil},
		{hello + `read line; echo '{"run":1,"done":true}'`, `output line 2 (run 1, seed 1): the run is closed with 3 of 3 calls unanswered, the first call 0`, nil},
		{hello + `exec sleep 30`, `after output line 1 (run 1, seed 1): no complete answer within 2s: killed it`, nil},
		{`echo '{"rlcheck_adapter":1,"strategies":["combined"]}'; cat >/dev/null`, `offers strategy "combined", the name of a Go strategy`, nil},
		{hello + `cat >/dev/null`, `--strategy "nope" is not among the strategies run (combined) nor those --exec offers (sh)`, []string{"--log", "-", "--strategy", "nope"}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		args := append([]string{"simulate", "../../docs/examples/adapter.yaml", "--exec", c.exec, "--exec-timeout", "2s"}, c.more...)
		code := Execute(args, nil, &stdout, &stderr)
		assert.Equal(t, exitUsage, code, c.exec)
		assert.Contains(t, stderr.String(), c.want, c.exec)
		assert.Less(t, time.Since(start), 10*time.Second, "cut at the timeout: %s", c.exec)
	}
}

// TestAuditExec: audit --exec audits the adapter's strategies as it does
// the Go designs, and none of those unless --strategies names some: the
// guide's sequential overfills 5/1s on the steady workload, its combined
// limiter keeps every window.
func TestAuditExec(t *testing.T) {
	needPython(t)
	t.Parallel()
	guide, err := filepath.Abs("../../adapters/python/guide.py")
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"audit", "--rules", "5/1s,12/3s", "--seeds", "2", "--no-search", "--strategies", "xrate-chained",
		"--exec", "python3 '" + guide + "'"}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	out := stdout.String()
	rows := regexp.MustCompile(`(?m)^(\S+)\s+\S.*?\s(burst-after-idle)\s`).FindAllStringSubmatch(out, -1)
	var names []string
	for _, r := range rows {
		names = append(names, r[1])
	}
	assert.Equal(t, []string{"xrate-chained", "py-sequential", "py-combined"}, names)
	assert.Regexp(t, `(?m)^py-sequential .*\n\s+steady\s+2/2\s+[1-9]\d*, 0 `, out)
	assert.NotRegexp(t, `(?ms)^py-combined.*[1-9]/2`, strings.SplitN(out, "\n\nworkloads:", 2)[0])
}

// TestAuditExecRefusesWithExit2: a lying program stops audit as it stops
// simulate.
func TestAuditExecRefusesWithExit2(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Execute([]string{"audit", "--rules", "2/1s", "--no-search", "--exec-timeout", "2s", "--exec",
		`echo '{"rlcheck_adapter":1,"strategies":["sh"]}'; read line; echo '{"run":1,"call":0,"send_ns":-5}'`}, nil, &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "output line 2 (run 1, seed 1): call 0 sends at -5 ns, before its arrival")
}

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/shlex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocs runs every "$ rlcheck …" command shown in a console block of
// README.md, CONTRIBUTING.md and every docs/*.md page (docPages), from
// the repository root (-short and -race skip them), and compares what it prints (stdout, then stderr)
// with the output shown under it, so the docs cannot drift from the
// program. "a | b" pipes a's stdout into b; "$ echo $?" shows the exit
// status of the command before it. Blocks holding any other command are
// left alone. With -update the shown outputs are rewritten.
//
// The examples run in parallel, in process: Execute keeps no state between
// calls, and a command shown on several pages runs once. Those that reach
// a Redis of their own run first, alone, because go-redis keeps its logger
// in a package variable that --redis-url sets.
func TestDocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The outputs are deterministic, so the race detector would only
		// make the documented simulations many times slower.
		t.Skip("runs every documented command")
	}
	t.Chdir("../..")
	t.Setenv("GITHUB_ACTIONS", "") // the documented output is the terminal's
	if os.Getenv("GOGC") == "" {
		// The documented simulations allocate fast over a small live heap
		// (an embedded Redis per run): collecting at 5x rather than 2x the
		// live heap about halves their CPU time. With GOGC set, check leaves the
		// process-wide GC percent alone, so parallel checks cannot restore
		// each other's value.
		t.Setenv("GOGC", "400")
		old := debug.SetGCPercent(400)
		t.Cleanup(func() { debug.SetGCPercent(old) }) // after the parallel examples
	}
	pages := docPages(t)
	runs := exampleRuns{}
	total := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		md := string(data)
		exs := docExamples(md)
		total += len(exs)
		for i := range exs {
			runs.add(exs[i].cmd)
			if i > 0 && exs[i].cmd == "echo $?" && exs[i-1].cmd != "echo $?" {
				exs[i].prev = exs[i-1].cmd
			}
		}
		for i := range exs {
			ex := &exs[i]
			t.Run(filepath.Base(page)+"/"+ex.cmd, func(t *testing.T) {
				if !strings.Contains(ex.cmd, "--redis-") {
					t.Parallel()
				}
				ex.got = runs.output(ex.cmd, ex.prev)
				ex.ran = true
				if !*update {
					assert.Equal(t, ex.want, ex.got, "%s shows the expected output for\n$ %s\nbut the command prints the actual one", page, ex.cmd)
				}
			})
		}
		if *update {
			// After the parallel examples are done, before the directory
			// is restored.
			t.Cleanup(func() {
				assert.NoError(t, os.WriteFile(page, []byte(rewriteDocs(md, exs)), 0o644))
			})
		}
	}
	require.GreaterOrEqual(t, total, 3, "examples found; the parser is probably broken")
}

// docPages lists the pages whose examples TestDocs runs, relative to the
// repository root (the working directory): README.md, CONTRIBUTING.md and
// every page of docs/, so that a new page is covered without being named.
func docPages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs, "no docs/*.md: not run from the repository root?")
	return append([]string{"README.md", "CONTRIBUTING.md"}, docs...)
}

// exampleRuns runs each distinct shown command once, whichever example asks
// first, and keeps what it printed and its exit status.
type exampleRuns map[string]*exampleRun

type exampleRun struct {
	once sync.Once
	out  string
	code int
}

// add notes a command; every command is added before the examples run.
func (r exampleRuns) add(cmd string) {
	if _, ok := r[cmd]; !ok && cmd != "echo $?" {
		r[cmd] = &exampleRun{}
	}
}

func (r exampleRuns) run(cmd string) (string, int) {
	d := r[cmd]
	d.once.Do(func() { d.out, d.code = runDocCommand(cmd) })
	return d.out, d.code
}

// output is what cmd prints; for "echo $?", the exit status of prev.
func (r exampleRuns) output(cmd, prev string) string {
	if cmd == "echo $?" {
		code := 0
		if prev != "" {
			_, code = r.run(prev)
		}
		return strconv.Itoa(code) + "\n"
	}
	out, _ := r.run(cmd)
	return out
}

type docExample struct {
	cmd, want string
	start     int // line index of the "$" line
	end       int // line index after the last output line
	got       string
	ran       bool   // -run may select a few examples; only those are rewritten
	prev      string // for "echo $?", the command whose exit status it shows ("": none, 0)
}

// runDocCommand runs one shown command and returns what it prints and its
// exit status.
func runDocCommand(cmd string) (string, int) {
	var stdin, out, errOut string
	code := 0
	for _, stage := range strings.Split(cmd, " | ") {
		args, err := shlex.Split(stage)
		if err != nil || len(args) == 0 {
			return fmt.Sprintf("cannot split %q into words: %v", stage, err), -1
		}
		var o, e bytes.Buffer
		code = Execute(args[1:], strings.NewReader(stdin), &o, &e)
		stdin, out, errOut = o.String(), o.String(), errOut+e.String()
	}
	return out + errOut, code
}

// docExamples finds the runnable examples: console blocks whose commands
// are all rlcheck (piped into rlcheck) or "echo $?".
func docExamples(md string) []docExample {
	var exs, block []docExample
	in, runnable := false, true
	lines := strings.Split(md, "\n")
	for i, line := range lines {
		switch {
		case !in && line == "```console":
			in, runnable, block = true, true, nil
		case in && line == "```":
			if n := len(block); n > 0 {
				block[n-1].end = i
			}
			if runnable {
				exs = append(exs, block...)
			}
			in = false
		case in && strings.HasPrefix(line, "$ "):
			if n := len(block); n > 0 {
				block[n-1].end = i
			}
			cmd := strings.TrimPrefix(line, "$ ")
			if !isRlcheckCommand(cmd) && cmd != "echo $?" {
				runnable = false
			}
			block = append(block, docExample{cmd: cmd, start: i})
		case in && len(block) > 0:
			block[len(block)-1].want += line + "\n"
		}
	}
	return exs
}

func isRlcheckCommand(cmd string) bool {
	for _, stage := range strings.Split(cmd, " | ") {
		if f := strings.Fields(stage); len(f) == 0 || f[0] != "rlcheck" || strings.ContainsAny(stage, "<>;&`") {
			return false
		}
	}
	return true
}

// rewriteDocs replaces each example's shown output with what it printed.
func rewriteDocs(md string, exs []docExample) string {
	lines := strings.Split(md, "\n")
	var out []string
	next := 0
	for _, ex := range exs {
		if !ex.ran {
			continue
		}
		out = append(out, lines[next:ex.start+1]...)
		out = append(out, strings.Split(strings.TrimSuffix(ex.got, "\n"), "\n")...)
		if ex.got == "" {
			out = out[:len(out)-1]
		}
		next = ex.end
	}
	out = append(out, lines[next:]...)
	return strings.Join(out, "\n")
}

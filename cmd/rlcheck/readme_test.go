package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDocs runs every "$ rlcheck …" command shown in a console block of
// README.md and of the docs/*.md pages, from
// the repository root (-short and -race skip them), and compares what it prints (stdout, then stderr)
// with the output shown under it, so the docs cannot drift from the
// program. "a | b" pipes a's stdout into b; "$ echo $?" shows the exit
// status of the command before it. Blocks holding any other command are
// left alone. With -update the shown outputs are rewritten.
func TestDocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		// The outputs are deterministic, so the race detector would only
		// make the documented simulations many times slower.
		t.Skip("runs every documented command")
	}
	t.Chdir("../..")
	t.Setenv("GITHUB_ACTIONS", "") // the documented output is the terminal's
	pages := []string{"README.md", "docs/simulate.md", "docs/audit.md", "docs/redis.md", "docs/access-logs.md", "docs/go-api.md"}
	total := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		md := string(data)
		exs := docExamples(md)
		total += len(exs)
		for i := range exs {
			ex := &exs[i]
			t.Run(filepath.Base(page)+"/"+ex.cmd, func(t *testing.T) {
				ex.got, ex.code = runDocCommand(ex.cmd, ex.prevCode)
				ex.ran = true
				if ex.got != ex.want && !*update {
					t.Errorf("%s shows, for\n$ %s\n%s\nbut it prints\n%s", page, ex.cmd, ex.want, ex.got)
				}
			})
			if i+1 < len(exs) && exs[i+1].cmd == "echo $?" {
				exs[i+1].prevCode = ex.code
			}
		}
		if *update {
			if err := os.WriteFile(page, []byte(rewriteDocs(md, exs)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total < 3 {
		t.Fatalf("found %d examples; the parser is probably broken", total)
	}
}

type docExample struct {
	cmd, want string
	start     int // line index of the "$" line
	end       int // line index after the last output line
	got       string
	ran       bool // -run may select a few examples; only those are rewritten
	code      int  // the exit status of cmd, for a following "echo $?"
	prevCode  int
}

// runDocCommand runs one shown command and returns what it prints and its
// exit status.
func runDocCommand(cmd string, prevCode int) (string, int) {
	if cmd == "echo $?" {
		return strconv.Itoa(prevCode) + "\n", 0
	}
	var stdin, out, errOut string
	code := 0
	for _, stage := range strings.Split(cmd, " | ") {
		args := strings.Fields(stage)
		var o, e bytes.Buffer
		code = Execute(unquote(args[1:]), strings.NewReader(stdin), &o, &e)
		stdin, out, errOut = o.String(), o.String(), errOut+e.String()
	}
	return out + errOut, code
}

// unquote strips one level of single quotes from shell words.
func unquote(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.Trim(a, "'")
	}
	return out
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

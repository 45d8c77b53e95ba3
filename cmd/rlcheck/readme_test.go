package main

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestREADME runs every "$ rlcheck …" command shown in a console block of
// README.md from the repository root and compares what it prints (stdout,
// then stderr) with the output shown under it, so the README cannot drift
// from the program. "a | b" pipes a's stdout into b.
func TestREADME(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	n := 0
	for _, ex := range readmeExamples(string(data)) {
		n++
		t.Run(ex.cmd, func(t *testing.T) {
			var stdin string
			var out, errOut string
			for _, stage := range strings.Split(ex.cmd, " | ") {
				args := strings.Fields(stage)
				if len(args) == 0 || args[0] != "rlcheck" {
					t.Fatalf("README command %q: every stage must run rlcheck", ex.cmd)
				}
				var o, e bytes.Buffer
				Execute(args[1:], strings.NewReader(stdin), &o, &e)
				stdin, out, errOut = o.String(), o.String(), errOut+e.String()
			}
			if got := out + errOut; got != ex.want {
				t.Errorf("README.md shows, for\n$ %s\n%s\nbut it prints\n%s", ex.cmd, ex.want, got)
			}
		})
	}
	if n < 3 {
		t.Fatalf("found %d README examples; the parser is probably broken", n)
	}
}

type readmeExample struct{ cmd, want string }

func readmeExamples(md string) []readmeExample {
	var exs []readmeExample
	var cur *readmeExample
	in := false
	sc := bufio.NewScanner(strings.NewReader(md))
	flush := func() {
		if cur != nil {
			exs = append(exs, *cur)
			cur = nil
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```console":
			in = true
		case in && line == "```":
			flush()
			in = false
		case in && strings.HasPrefix(line, "$ "):
			flush()
			cur = &readmeExample{cmd: strings.TrimPrefix(line, "$ ")}
		case in && cur != nil:
			cur.want += line + "\n"
		}
	}
	return exs
}

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDocsSimulate runs every console example of docs/simulate.md, as
// TestREADME does for README.md, so the simulation docs cannot drift.
func TestDocsSimulate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs every documented simulation")
	}
	data, err := os.ReadFile("../../docs/simulate.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..")
	exs := readmeExamples(string(data))
	if len(exs) < 5 {
		t.Fatalf("found %d examples", len(exs))
	}
	for _, ex := range exs {
		t.Run(ex.cmd, func(t *testing.T) {
			var stdin, out, errOut string
			for _, stage := range strings.Split(ex.cmd, " | ") {
				args := strings.Fields(stage)
				var o, e bytes.Buffer
				Execute(args[1:], strings.NewReader(stdin), &o, &e)
				stdin, out, errOut = o.String(), o.String(), errOut+e.String()
			}
			if got := out + errOut; got != ex.want {
				t.Errorf("docs/simulate.md shows, for\n$ %s\n%s\nbut it prints\n%s", ex.cmd, ex.want, got)
			}
		})
	}
}

package report_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// Write reports a verdict as rlcheck check prints it; Options.Format picks
// text, json, junit or github.
func ExampleWrite() {
	rules, err := rule.ParseList("5/1s")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.txt", R: strings.NewReader("0.0\n0.1\n0.2\n0.3\n0.4\n0.5\n")}},
		logcheck.Config{Rules: rules})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := report.Write(os.Stdout, []*report.Result{res}, report.Options{Format: "text"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// sends.txt: 6 sends from 0.000000000 s to 0.500000000 s (500ms), half-open windows
	// read as plain, timestamps as decimal seconds
	//
	// RULE  VIOLATIONS  MAX IN WINDOW  FIRST VIOLATION
	// 5/1s  1           6              line 6 at 0.500000000 s: 6 sends in the window from line 1 (0.000000000 s)
	//
	// FAIL: 1 violation (5/1s: 1)
}

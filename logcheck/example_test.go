package logcheck_test

import (
	"fmt"
	"strings"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
)

// Run checks send logs (here one, in memory) against the rules, as
// "rlcheck check" does: six sends within one second break 5/1s once.
func ExampleRun() {
	log := "0\n0.1\n0.2\n0.3\n0.4\n0.5\n3\n"
	rules, err := rule.ParseList("5/1s,12/3s")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.txt", R: strings.NewReader(log)}},
		logcheck.Config{Rules: rules})
	if err != nil {
		fmt.Println(err) // bad input: a *sendlog.InputError naming the file and line
		return
	}
	for _, r := range res.Groups[0].Report.Rules {
		fmt.Printf("%v: %d violations, at most %d sends in one window\n", r.Rule, r.Violations, r.MaxInWindow)
	}
	fmt.Println("violations:", res.Violations())
	// Output:
	// 5/1s: 1 violations, at most 6 sends in one window
	// 12/3s: 0 violations, at most 6 sends in one window
	// violations: 1
}

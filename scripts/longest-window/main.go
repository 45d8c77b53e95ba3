// Command longest-window prints the longest window of a rule list in
// nanoseconds, plus one: the context a time shard needs before its start
// under either boundary (scripts/shard-check.sh).
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: longest-window RULES")
		os.Exit(2)
	}
	rules, err := rule.ParseList(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var w time.Duration
	for _, r := range rules {
		w = max(w, r.Window)
	}
	fmt.Println(int64(w) + 1)
}

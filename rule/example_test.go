package rule_test

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// Rules parse from the forms people write; a bad one is an error naming it.
func ExampleParseList() {
	rules, err := rule.ParseList("10/s, 500/min, 10000/day, 3/1m30s")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rules {
		fmt.Printf("%v: at most %d sends in any %v window\n", r, r.Limit, r.Window)
	}
	_, err = rule.ParseList("10/s,0/min")
	fmt.Println(err != nil)
	// Output:
	// 10/1s: at most 10 sends in any 1s window
	// 500/1m: at most 500 sends in any 1m0s window
	// 10000/24h: at most 10000 sends in any 24h0m0s window
	// 3/1m30s: at most 3 sends in any 1m30s window
	// true
}

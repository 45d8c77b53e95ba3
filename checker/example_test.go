package checker_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

func Example() {
	ms := int64(time.Millisecond)
	sends := []int64{0, 300 * ms, 600 * ms, 900 * ms, 1300 * ms}
	rep, _ := checker.Check(sends, checker.Config{
		Rules: []rule.Rule{{Limit: 3, Window: time.Second}},
	})
	r := rep.Rules[0]
	fmt.Printf("%s: %d violation, at %v; max %d sends in a window\n",
		r.Rule, r.Violations, time.Duration(r.First.Send.At), r.MaxInWindow)
	// Output: 3/1s: 1 violation, at 900ms; max 4 sends in a window
}

// Cost rules meter a unit per send; a plain call rule counts each send
// once. A send dearer than the whole allowance breaks the rule on its own,
// and still counts in later windows: the last send, of cost 0, finds its
// window over the allowance.
func ExampleChecker_ObserveCost() {
	tokens, _ := rule.Parse("1000 tokens/1m")
	calls, _ := rule.Parse("3/1m fixed")
	c := checker.New(checker.Config{Rules: []rule.Rule{tokens, calls}, Units: []string{"tokens"}})
	for i, cost := range []int64{400, 500, 200, 1500, 0} {
		if err := c.ObserveCost(int64(i)*int64(time.Second), int64(i+1), []int64{cost}); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, r := range c.Report().Rules {
		fmt.Printf("%v: %d violations, at most %d in a window\n", r.Rule, r.Violations, r.MaxInWindow)
	}
	// Output:
	// 1000 tokens/1m: 3 violations, at most 2600 in a window
	// 3/1m fixed: 2 violations, at most 5 in a window
}

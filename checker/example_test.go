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

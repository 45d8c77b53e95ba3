package strategies_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// The decision logic takes the time as an argument, so it can be driven
// at exact instants.
func ExampleBooks() {
	books := strategies.Books{
		strategies.NewSlidingLog(rule.Rule{Limit: 2, Window: time.Second}),
		strategies.NewSlidingLog(rule.Rule{Limit: 3, Window: 3 * time.Second}),
	}
	for _, ms := range []int64{0, 0, 1000, 1000, 1500} {
		now := ms * int64(time.Millisecond)
		wait, rule := books.WaitTime(now)
		if wait == 0 {
			books.Record(now)
			fmt.Printf("%4d ms: admitted\n", ms)
			continue
		}
		fmt.Printf("%4d ms: wait %v (rule %d binds)\n", ms, wait, rule)
	}
	// Output:
	//    0 ms: admitted
	//    0 ms: admitted
	// 1000 ms: admitted
	// 1000 ms: wait 2s (rule 1 binds)
	// 1500 ms: wait 1.5s (rule 1 binds)
}

// Requests reach the provider 15 to 40 ms after they are admitted: a limiter
// that keeps every window 25 ms wider keeps the rules as the provider
// counts them.
func ExampleWiden() {
	rules, _ := rule.ParseList("10/s,500/min")
	for _, r := range strategies.Widen(25*time.Millisecond, rules...) {
		fmt.Println(r.Limit, r.Window)
	}
	// Output:
	// 10 1.025s
	// 500 1m0.025s
}

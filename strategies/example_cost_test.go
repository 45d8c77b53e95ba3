package strategies_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// A language-model API meters requests and tokens: each call gives its
// tokens, in the order rule.Units names the units. A call asking for
// more tokens than a rule allows in a window is refused at once.
func ExampleCombined_AcquireCost() {
	rules, _ := rule.ParseList("500/1m, 90000 tokens/1m")
	lim := strategies.NewRealCombined(rules...)
	fmt.Println(rule.Units(rules))
	ctx := context.Background()
	fmt.Println(lim.AcquireCost(ctx, []int64{1200}))
	err := lim.AcquireCost(ctx, []int64{120000})
	var ce *strategies.CostError
	fmt.Println(errors.As(err, &ce), ce.Rule, ce.Cost)
	// Output:
	// [tokens]
	// <nil>
	// true 90000 tokens/1m 120000
}

// A call that knows its cost only from its answer reserves an estimate
// (the prompt's tokens plus max_tokens) and settles to the usage the
// answer reports: the tokens it did not use are back for the next call.
func ExampleCombined_Reserve() {
	rules, _ := rule.ParseList("500/1m, 10000 tokens/1m")
	lim := strategies.NewRealCombined(rules...)
	ctx := context.Background()
	res, _ := lim.Reserve(ctx, []int64{1200 + 8000})
	fmt.Println(res.Estimates())
	// ... send the call; its answer reports 1200 + 350 tokens.
	fmt.Println(res.Settle([]int64{1550}), res.Settled())
	_, err := lim.Reserve(ctx, []int64{8000}) // 1550 + 8000 fit in 10000
	fmt.Println(err)
	// Output:
	// [9200]
	// <nil> true
	// <nil>
}

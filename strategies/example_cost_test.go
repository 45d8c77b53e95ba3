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

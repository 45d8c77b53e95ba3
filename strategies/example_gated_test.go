package strategies_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
)

// A service's usual start: parse the contract's rules, then run each call
// through a gate that holds one of 4 slots for the whole call and keeps
// every rule. Do returns the call's own error, or the context's when it
// ended first (and then nothing was recorded).
func ExampleNewRealGated() {
	rules, err := rule.ParseList("10/s,500/min,10000/day")
	if err != nil {
		fmt.Println(err)
		return
	}
	gate := strategies.NewRealGated(4, rules...)
	err = gate.Do(context.Background(), func() error {
		fmt.Println("calling the API")
		return errors.New("503 from the API")
	})
	fmt.Println(err)
	// Output:
	// calling the API
	// 503 from the API
}

package libs_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
)

// "5 per second" as x/time/rate users write it lets 9 calls into one
// half-open second after idle: the 5 banked tokens, then one every 200 ms.
func ExampleNewRateLimiter() {
	l := libs.NewRateLimiter(rule.Rule{Limit: 5, Window: time.Second}, libs.Config{})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var at []string
	for ms := range 1000 {
		t := start.Add(time.Duration(ms) * time.Millisecond)
		for l.AllowN(t, 1) {
			at = append(at, fmt.Sprint(ms))
		}
	}
	fmt.Println(len(at), "calls at ms", at)
	// Output: 9 calls at ms [0 0 0 0 0 200 400 600 800]
}

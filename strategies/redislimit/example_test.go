package redislimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
)

func ExampleNew() {
	c, err := embedded.Start() // or redis.NewClient / redis.NewClusterClient
	if err != nil {
		panic(err)
	}
	defer c.Close()
	rules, _ := rule.ParseList("10/s,500/min")
	l, err := redislimit.New(c, clock.NewReal(), rules, redislimit.Options{Key: "acme-api"})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		if err := l.Acquire(ctx); err != nil {
			panic(err)
		}
		// ... send the call ...
	}
	fmt.Println(l.Keys())
	fmt.Println(l.Stats().Records)
	// Output:
	// [rlcheck:{acme-api}:1s rlcheck:{acme-api}:1m:b64]
	// [3 3]
}

func ExampleKeyFor() {
	// The braces are a Redis Cluster hash tag: every rule of one key name
	// lands in the same slot, so one script can touch them all.
	fmt.Println(redislimit.KeyFor("acme-api", 24*time.Hour))
	// Output: rlcheck:{acme-api}:24h
}

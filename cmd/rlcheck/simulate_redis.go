package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// redisOptions connects to the Redis that --redis-url or --redis-cluster
// name, and warns on errOut of a server that may evict the limiter's keys;
// with neither, strategies that need Redis get an in-process one.
func (o *simulateOptions) redisOptions(errOut io.Writer) (simulate.Options, func(), error) {
	if o.redisURL == "" && o.redisCluster == "" {
		return simulate.Options{}, func() {}, nil
	}
	var cluster []string
	for _, a := range strings.Split(o.redisCluster, ",") {
		if a = strings.TrimSpace(a); a != "" {
			cluster = append(cluster, a)
		}
	}
	redis.SetLogger(quietRedis{}) // its retries would clutter stderr; errors still reach us
	c, err := redislimit.Dial(context.Background(), o.redisURL, cluster, 0)
	if err != nil {
		return simulate.Options{}, nil, fmt.Errorf("simulate: %w", err)
	}
	for _, w := range redislimit.Warnings(context.Background(), c) {
		fmt.Fprintf(errOut, "rlcheck: warning: %s\n", w)
	}
	return simulate.Options{Redis: c}, func() { _ = c.Close() }, nil
}

type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

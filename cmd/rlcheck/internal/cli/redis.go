package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// Redis connects to the Redis that --redis-url (url) or --redis-cluster
// (a comma-separated list of addresses) name, and warns on errOut of a
// server that may evict the limiter's keys; with neither, strategies that
// need Redis get an in-process one. The func closes the connection.
func Redis(url, clusterList string, errOut io.Writer) (simulate.Options, func(), error) {
	if url == "" && clusterList == "" {
		return simulate.Options{}, func() {}, nil
	}
	var cluster []string
	for _, a := range strings.Split(clusterList, ",") {
		if a = strings.TrimSpace(a); a != "" {
			cluster = append(cluster, a)
		}
	}
	redis.SetLogger(quietRedis{}) // its retries would clutter stderr; errors still reach us
	c, err := redislimit.Dial(context.Background(), url, cluster, 0)
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

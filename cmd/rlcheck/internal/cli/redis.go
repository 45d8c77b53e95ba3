package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
)

// RedisFlags are --redis-url and --redis-cluster, where the Redis
// strategies run.
type RedisFlags struct{ url, cluster string }

// Register registers the flags on fs.
func (f *RedisFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "redis-url", "", "run the redis strategies on this server (redis://host:port/db) instead of an in-process one")
	fs.StringVar(&f.cluster, "redis-cluster", "", "run the redis strategies on this Redis Cluster (host:port,host:port,...)")
}

// Resolve connects to the Redis that --redis-url (url) or --redis-cluster
// (a comma-separated list of addresses) name, and warns on errOut of a
// server that may evict the limiter's keys; with neither, strategies that
// need Redis get an in-process one. The func closes the connection.
func (f *RedisFlags) Resolve(errOut io.Writer) (simulate.Options, func(), error) {
	url, clusterList := f.url, f.cluster
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

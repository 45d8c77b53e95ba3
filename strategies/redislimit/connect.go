package redislimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/rule"
)

// Conn is what a limiter and its owner need: scripts, and Close.
type Conn interface {
	redis.Scripter
	Close() error
}

// Dial connects to one server given as a redis:// or rediss:// URL, or,
// when cluster lists host:port seeds, to a Redis Cluster; exactly one of
// the two must be set. It pings before returning, so a wrong address fails
// here, within timeout, rather than on the first call. A lost server fails
// each later call after one retry, rather than after go-redis' default
// backoff of seconds: a limiter would rather fail fast and closed.
func Dial(ctx context.Context, url string, cluster []string, timeout time.Duration) (Conn, error) {
	var c redis.UniversalClient
	switch {
	case url != "" && len(cluster) > 0:
		return nil, errors.New("redislimit: give a server URL or cluster addresses, not both")
	case url != "":
		opt, err := redis.ParseURL(url)
		if err != nil {
			return nil, fmt.Errorf("redislimit: %w", err)
		}
		opt.DialerRetries, opt.MaxRetries = 1, 1
		c = redis.NewClient(opt)
	case len(cluster) > 0:
		c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster, DialerRetries: 1, MaxRetries: 1})
	default:
		return nil, errors.New("redislimit: no server URL and no cluster addresses")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		where := url
		if where == "" {
			where = strings.Join(cluster, ",")
		}
		return nil, fmt.Errorf("redislimit: cannot reach Redis at %s: %w", where, err)
	}
	return c, nil
}

// Embedded starts an in-process miniredis and returns a client of it;
// Close stops both. It is the default store of simulations.
func Embedded() (Conn, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("redislimit: embedded Redis: %w", err)
	}
	return &embedded{Client: redis.NewClient(&redis.Options{Addr: m.Addr()}), m: m}, nil
}

type embedded struct {
	*redis.Client
	m *miniredis.Miniredis
}

func (e *embedded) Close() error {
	err := e.Client.Close()
	e.m.Close()
	return err
}

var resetScript = redis.NewScript(`for i = 1, #KEYS do redis.call('DEL', KEYS[i]) end return #KEYS`)

// Reset deletes the keys a limiter for key and rules would use, so a run
// can start from empty windows (a simulation replayed on a real server, a
// test).
func Reset(ctx context.Context, c redis.Scripter, key string, rules []rule.Rule) error {
	if err := checkKey(key); err != nil {
		return err
	}
	var keys []string
	for _, r := range rules {
		if k := KeyFor(key, r.Window); indexOf(keys, k) < 0 {
			keys = append(keys, k)
		}
	}
	if err := resetScript.Run(ctx, c, keys).Err(); err != nil {
		return fmt.Errorf("redislimit: reset %s: %w", key, err)
	}
	return nil
}

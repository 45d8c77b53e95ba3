package main

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/redistest"
)

func TestSimulateRedisUnreachableExits2(t *testing.T) {
	_, errOut, code := run(t, "", "simulate", "clock-skew", "--redis-url", "redis://127.0.0.1:1/0")
	assert.Equal(t, exitUsage, code, "unreachable: exit code")
	assert.Contains(t, errOut, "cannot reach Redis at redis://127.0.0.1:1/0", "unreachable: stderr should name the address")
	_, errOut, code = run(t, "", "simulate", "clock-skew", "--redis-url", "redis://x", "--redis-cluster", "127.0.0.1:1")
	assert.Equal(t, exitUsage, code, "--redis-url with --redis-cluster: exit code")
	assert.Contains(t, errOut, "not both", "--redis-url with --redis-cluster")
}

// TestSimulateRedisHidesPassword: the password of --redis-url never
// reaches stderr, whatever fails.
func TestSimulateRedisHidesPassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	for _, url := range []string{"redis://:secret@" + closed + "/0", "redis://:secret@127.0.0.1:notaport/0"} {
		_, errOut, code := run(t, "", "simulate", "seed", "--strategies", "redis", "--redis-url", url)
		assert.Equal(t, 2, code, errOut)
		assert.NotContains(t, errOut, "secret")
		assert.Contains(t, errOut, "xxxxx@127.0.0.1:")
	}
}

// TestSimulateRedisWarnsOfEviction: a server whose maxmemory-policy may
// evict the limiter's keys is named on stderr; the run goes on.
func TestSimulateRedisWarnsOfEviction(t *testing.T) {
	s := redistest.Start(t, "maxmemory-policy allkeys-lru")
	out, errOut, code := run(t, "", "simulate", "clock-skew", "--callers", "20", "--redis-url", "redis://"+s.Addr+"/0")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "rlcheck: warning: redislimit: the server's maxmemory-policy is allkeys-lru")
	assert.Contains(t, out, "redis-client-time")
}

// TestSimulateRedisSameEverywhere: the embedded miniredis, a real server and
// a real cluster give the same output, byte for byte, and server time never
// violates while skewed client time does.
func TestSimulateRedisSameEverywhere(t *testing.T) {
	t.Parallel()
	args := []string{"simulate", "clock-skew", "--callers", "150"}
	embedded, errOut, code := run(t, "", args...)
	require.Equal(t, exitOK, code, "embedded: exit code; stderr %q", errOut)
	require.Empty(t, errOut, "embedded: stderr")
	lines := strings.Split(embedded, "\n")
	require.GreaterOrEqual(t, len(lines), 5, "embedded: output lines:\n%s", embedded)
	require.True(t, strings.HasPrefix(lines[3], "redis   ") && strings.HasSuffix(lines[3], " 0       0"),
		"want redis clean:\n%s", embedded)
	require.True(t, strings.HasPrefix(lines[4], "redis-client-time") && !strings.HasSuffix(lines[4], " 0       0"),
		"want redis-client-time violating:\n%s", embedded)
	s := redistest.Start(t)
	c := redistest.StartCluster(t)
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"server", []string{"--redis-url", "redis://" + s.Addr + "/0"}},
		{"server again, over the keys of the first run", []string{"--redis-url", "redis://" + s.Addr + "/0"}},
		{"cluster", []string{"--redis-cluster", strings.Join(c.Addrs(), ",")}},
	} {
		out, errOut, code := run(t, "", append(args, tc.extra...)...)
		assert.Equal(t, exitOK, code, "%s: exit code; stderr %q", tc.name, errOut)
		assert.Empty(t, errOut, "%s: stderr", tc.name)
		assert.Equal(t, embedded, out, "%s: output, against the embedded Redis's", tc.name)
	}
}

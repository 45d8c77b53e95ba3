package main

import (
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/internal/redistest"
)

func TestSimulateRedisUnreachableExits2(t *testing.T) {
	_, errOut, code := run(t, "", "simulate", "clock-skew", "--redis-url", "redis://127.0.0.1:1/0")
	if code != 2 || !strings.Contains(errOut, "cannot reach Redis at redis://127.0.0.1:1/0") {
		t.Fatalf("exit %d, stderr %q; want 2 and the unreachable address", code, errOut)
	}
	_, errOut, code = run(t, "", "simulate", "clock-skew", "--redis-url", "redis://x", "--redis-cluster", "127.0.0.1:1")
	if code != 2 || !strings.Contains(errOut, "not both") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestSimulateRedisSameEverywhere: the embedded miniredis, a real server and
// a real cluster give the same output, byte for byte, and server time never
// violates while skewed client time does.
func TestSimulateRedisSameEverywhere(t *testing.T) {
	args := []string{"simulate", "clock-skew", "--callers", "150"}
	embedded, errOut, code := run(t, "", args...)
	if code != 0 || errOut != "" {
		t.Fatalf("embedded: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(embedded, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[3], "redis   ") || !strings.HasSuffix(lines[3], " 0       0") ||
		!strings.HasPrefix(lines[4], "redis-client-time") || strings.HasSuffix(lines[4], " 0       0") {
		t.Fatalf("want redis clean and redis-client-time violating:\n%s", embedded)
	}
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
		if code != 0 || errOut != "" || out != embedded {
			t.Errorf("%s: exit %d, stderr %q, output:\n%s\nwant, as embedded:\n%s", tc.name, code, errOut, out, embedded)
		}
	}
}

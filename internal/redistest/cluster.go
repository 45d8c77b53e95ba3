package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Cluster is a Redis Cluster of three masters without replicas, on
// loopback.
type Cluster struct {
	Nodes []*Server
}

// Addrs returns the nodes' host:port, ready for redis.ClusterOptions.Addrs.
func (c *Cluster) Addrs() []string {
	a := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		a[i] = n.Addr
	}
	return a
}

// StartCluster starts three cluster-enabled servers, joins them with
// redis-cli --cluster create, waits until every node reports
// cluster_state:ok, and stops them when the test ends.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	bin := Binary(t)
	cli := need(t, "redis-cli")
	c := &Cluster{}
	for range 3 {
		c.Nodes = append(c.Nodes, startNode(t, bin))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, err := Command(n.Addr, time.Second, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("redistest: node %s never reached cluster_state:ok (err %v):\n%s", n.Addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// startNode starts one cluster-enabled server; its cluster bus gets a port
// of its own, not the classic port+10000, which may be taken or too large.
func startNode(t testing.TB, bin string) *Server {
	t.Helper()
	dir := t.TempDir()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		bus, err := freePort()
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		if bus == port {
			continue
		}
		s, err := startAt(bin, dir, port, []string{
			"cluster-enabled yes",
			"cluster-port " + strconv.Itoa(bus),
			"cluster-config-file " + fmt.Sprintf("nodes-%d.conf", port),
			"cluster-node-timeout 5000",
		})
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: cluster node: %v", lastErr)
	return nil
}

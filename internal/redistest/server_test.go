package redistest

import (
	"strings"
	"testing"
	"time"
)

func TestStartAnswersAndStops(t *testing.T) {
	s := Start(t)
	if got, err := Command(s.Addr, time.Second, "PING"); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	// No persistence: an append-only file would write to disk.
	info, err := Command(s.Addr, time.Second, "INFO", "persistence")
	if err != nil || !strings.Contains(info, "aof_enabled:0") {
		t.Fatalf("INFO persistence = %q, %v; want aof_enabled:0", info, err)
	}
	s.Kill()
	if _, err := Command(s.Addr, 200*time.Millisecond, "PING"); err == nil {
		t.Fatal("server still answers after Kill")
	}
	s.Stop() // a second stop must be harmless
}

func TestCluster(t *testing.T) {
	c := StartCluster(t)
	if len(c.Addrs()) != 3 {
		t.Fatalf("%d nodes, want 3", len(c.Addrs()))
	}
	for _, a := range c.Addrs() {
		info, err := Command(a, time.Second, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_known_nodes:3") || !strings.Contains(info, "cluster_size:3") {
			t.Fatalf("%s CLUSTER INFO = %q, %v", a, info, err)
		}
	}
}

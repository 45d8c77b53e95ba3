package redistest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartAnswersAndStops(t *testing.T) {
	s := Start(t)
	got, err := Command(s.Addr, time.Second, "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", got)
	// No persistence: an append-only file would write to disk.
	info, err := Command(s.Addr, time.Second, "INFO", "persistence")
	require.NoError(t, err)
	assert.Contains(t, info, "aof_enabled:0")
	s.Kill()
	_, err = Command(s.Addr, 200*time.Millisecond, "PING")
	assert.Error(t, err, "server still answers after Kill")
	s.Stop() // a second stop must be harmless
}

// TestPauseResume: a paused server answers nothing until resumed, then
// answers what it was sent meanwhile.
func TestPauseResume(t *testing.T) {
	s := Start(t)
	s.Pause(t)
	_, err := Command(s.Addr, 200*time.Millisecond, "PING")
	require.Error(t, err, "a paused server answered")
	done := make(chan error, 1)
	go func() {
		_, err := Command(s.Addr, 5*time.Second, "PING")
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	s.Resume(t)
	assert.NoError(t, <-done, "PING sent while paused, answered after Resume")
}

func TestCluster(t *testing.T) {
	c := StartCluster(t)
	require.Len(t, c.Addrs(), 3)
	for _, a := range c.Addrs() {
		info, err := Command(a, time.Second, "CLUSTER", "INFO")
		require.NoError(t, err, a)
		assert.Contains(t, info, "cluster_known_nodes:3", a)
		assert.Contains(t, info, "cluster_size:3", a)
	}
}

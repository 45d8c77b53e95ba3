package serve

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// maxKeyBytes bounds the heap a key holds while serving, for the shape
// TestHostileClients sends (one 5/1s rule, 200-byte keys): its name, its
// place in the key table and list, its metric label and its checker with
// one send in its window. TestMemoryPerKey measures it; docs/serve.md
// states it.
const maxKeyBytes = 1536

// TestMemoryPerKey measures what serve holds per live key: 20,000
// distinct keys arrive within one second of a virtual clock, so that none
// can be given back, and the heap they hold is divided among them.
func TestMemoryPerKey(t *testing.T) {
	const keys = 20_000
	per := heapPerKey(t, keys)
	t.Logf("%d B of heap per key held (bound %d B)", per, maxKeyBytes)
	assert.LessOrEqual(t, per, int64(maxKeyBytes), "heap per key held while serving")
}

// heapPerKey returns the heap a server holds per key after n distinct
// 200-byte keys arrived within one second and were answered.
func heapPerKey(t *testing.T, n int) int64 {
	t.Helper()
	var at int64 = 1e18
	s, err := New(Options{
		Rules: []rule.Rule{{Limit: 5, Window: time.Second}}, KeyHeader: "X-Key",
		Log: io.Discard, Now: func() int64 { return at },
	})
	require.NoError(t, err)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		at += int64(time.Second) / int64(2*n)
		a, err := s.arrive(fmt.Sprintf("%0200d", i), nil)
		require.NoError(t, err)
		s.end(a, 200)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Equal(t, n, s.PeakKeys(), "no key given back within the second")
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(s)
	return held / int64(n)
}

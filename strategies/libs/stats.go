package libs

import (
	"sync/atomic"
	"time"

	"github.com/rlcheck/rlcheck/strategies"
)

// statsKeeper holds strategies.Stats in atomics, so Stats may be read while
// callers are parked inside a limiter.
type statsKeeper struct {
	records    []atomic.Int64
	waited     []atomic.Int64
	firstBound []atomic.Int64
}

func newStatsKeeper(n int) *statsKeeper {
	k := &statsKeeper{
		records:    make([]atomic.Int64, n),
		waited:     make([]atomic.Int64, n),
		firstBound: make([]atomic.Int64, n),
	}
	for i := range k.firstBound {
		k.firstBound[i].Store(-1)
	}
	return k
}

func (k *statsKeeper) record(i int, delta int64) { k.records[i].Add(delta) }

// wait notes that rule i, binding at now, made a caller sleep for d.
func (k *statsKeeper) wait(i int, now int64, d time.Duration) {
	k.firstBound[i].CompareAndSwap(-1, now)
	k.waited[i].Add(int64(d))
}

func (k *statsKeeper) snapshot() strategies.Stats {
	s := strategies.Stats{
		Records:    make([]int64, len(k.records)),
		Waited:     make([]time.Duration, len(k.records)),
		FirstBound: make([]int64, len(k.records)),
	}
	for i := range k.records {
		s.Records[i] = k.records[i].Load()
		s.Waited[i] = time.Duration(k.waited[i].Load())
		s.FirstBound[i] = k.firstBound[i].Load()
	}
	return s
}

package strategies

import (
	"sync/atomic"
	"time"
)

// statsKeeper holds Stats with atomic fields, so Stats can be read while
// callers are parked inside a limiter without taking its lock.
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

func (k *statsKeeper) record(i int) { k.records[i].Add(1) }

// bound notes that rule i made a caller wait at now.
func (k *statsKeeper) bound(i int, now int64) {
	k.firstBound[i].CompareAndSwap(-1, now)
}

func (k *statsKeeper) wait(i int, d time.Duration) { k.waited[i].Add(int64(d)) }

func (k *statsKeeper) snapshot() Stats {
	s := Stats{
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

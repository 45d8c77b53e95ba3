package strategies

import (
	"sync/atomic"
	"time"
)

// StatsKeeper keeps a limiter's Stats in atomics, so that Stats can be read
// while callers are parked inside the limiter, without its lock. Limiters
// outside this package (Redis, the library adapters) keep theirs with it
// too. Use NewStatsKeeper.
type StatsKeeper struct {
	records    []atomic.Int64
	waited     []atomic.Int64
	firstBound []atomic.Int64
}

// NewStatsKeeper returns a keeper for n rules.
func NewStatsKeeper(n int) *StatsKeeper {
	k := &StatsKeeper{
		records:    make([]atomic.Int64, n),
		waited:     make([]atomic.Int64, n),
		firstBound: make([]atomic.Int64, n),
	}
	for i := range k.firstBound {
		k.firstBound[i].Store(-1)
	}
	return k
}

// Record adds delta records to rule i (a negative delta gives back
// capacity, as a cancelled reservation does).
func (k *StatsKeeper) Record(i int, delta int64) { k.records[i].Add(delta) }

// RecordAll records one call in every rule, as check-all designs do.
func (k *StatsKeeper) RecordAll() {
	for i := range k.records {
		k.records[i].Add(1)
	}
}

// Bound notes that rule i made a caller wait at now; only the first time
// is kept.
func (k *StatsKeeper) Bound(i int, now int64) { k.firstBound[i].CompareAndSwap(-1, now) }

// Wait adds d to the time callers slept with rule i binding.
func (k *StatsKeeper) Wait(i int, d time.Duration) { k.waited[i].Add(int64(d)) }

// Stats returns a copy of the figures kept.
func (k *StatsKeeper) Stats() Stats {
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

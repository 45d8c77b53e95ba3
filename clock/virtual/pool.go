package virtual

import (
	"runtime"
	"slices"
	"sync"
	"time"
)

const (
	// maxPooledProcs bounds the coroutines a cold pool keeps, about 8.6 KB
	// of stack each at most (see maxCallers); more than a queue of 1,600
	// callers on combined's lock needs.
	maxPooledProcs = 2048
	// maxPooledSlice bounds the scheduler slices a cold pool keeps.
	maxPooledSlice = 4 * maxPooledProcs
	// maxPooledTimes bounds the arrival times a cold pool keeps (1 MiB).
	maxPooledTimes = 1 << 17
)

// poolIdle is how long cold pools outlive the last TakePool call (between one and two times this); a variable for the tests.
var poolIdle = time.Second

// coldPools keeps the pools given back by finished runs for the next
// runs, from any goroutine: a run that starts all its callers' coroutines
// afresh spends most of its allocations on it. It keeps at most one pool
// a core, and stops them all once none has been taken for poolIdle.
var coldPools struct {
	mu    sync.Mutex
	pools []*Pool
	taken bool        // a pool was taken since the reaper last looked
	reap  *time.Timer // armed while pools are kept
}

// TakePool returns a kept pool, or a new one, for one run on any
// goroutine; give it back with GivePool when the run ended, or pass it to
// CloseAfterPanic when it did not.
func TakePool() *Pool {
	c := &coldPools
	c.mu.Lock()
	defer c.mu.Unlock()
	c.taken = true
	if n := len(c.pools); n > 0 {
		pp := c.pools[n-1]
		c.pools[n-1] = nil
		c.pools = c.pools[:n-1]
		return pp
	}
	return &Pool{cold: true}
}

// GivePool keeps pp, whose run ended, for the next run, or stops it when
// enough are kept.
func GivePool(pp *Pool) {
	c := &coldPools
	c.mu.Lock()
	if len(c.pools) >= runtime.GOMAXPROCS(0) {
		c.mu.Unlock()
		go pp.Close() // see runDetached
		return
	}
	c.pools = append(c.pools, pp)
	if c.reap == nil {
		c.reap = time.AfterFunc(poolIdle, reapPools)
	}
	c.mu.Unlock()
}

// reapPools stops the kept pools when none was taken since its last call.
func reapPools() {
	c := &coldPools
	c.mu.Lock()
	if c.reap == nil { // stopped by the tests
		c.mu.Unlock()
		return
	}
	if c.taken {
		c.taken = false
		c.reap.Reset(poolIdle)
		c.mu.Unlock()
		return
	}
	pools := c.pools
	c.pools, c.reap = nil, nil
	c.mu.Unlock()
	for _, pp := range pools {
		pp.Close()
	}
}

// CloseAfterPanic stops the coroutines of a run that panicked or called
// runtime.Goexit. Unwinding them may panic again; that must not end the
// program from a goroutine nobody waits for, as the panic that matters has
// reached the run's caller already.
func CloseAfterPanic(pp *Pool) {
	defer func() { _ = recover() }()
	pp.Close()
}

// ReleasePools stops the callers' coroutines that pools given back keep for
// later runs, which otherwise end a second or two after the last call:
// for a program or test that checks no goroutine outlives its work.
func ReleasePools() {
	c := &coldPools
	c.mu.Lock()
	pools := c.pools
	c.pools = nil
	if c.reap != nil {
		c.reap.Stop()
		c.reap = nil
	}
	c.mu.Unlock()
	for _, pp := range pools {
		pp.Close()
	}
}

// Kept returns the pools kept for later runs and the coroutines they hold.
func Kept() (pools, procs int) {
	c := &coldPools
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pp := range c.pools {
		procs += len(pp.idle)
	}
	return len(c.pools), procs
}

// Run runs s, a scheduler of pp.NewSched, to its end; on a pool of
// TakePool it resumes the callers on a goroutine of their own and then
// trims the pool to the size kept.
func (pp *Pool) Run(s *Sched) {
	if !pp.cold {
		s.Run()
		return
	}
	runDetached(func() {
		s.Run()
		pp.trim()
	})
}

// trim stops the coroutines beyond maxPooledProcs and drops oversized
// slices, so that a kept pool stays small whatever its last run was.
func (pp *Pool) trim() {
	if n := len(pp.idle); n > maxPooledProcs {
		for _, p := range pp.idle[maxPooledProcs:] {
			p.stop()
		}
		clear(pp.idle[maxPooledProcs:])
		pp.idle = slices.Clone(pp.idle[:maxPooledProcs]) // not the run's whole array
	}
	if s := pp.sched; s != nil {
		s.body = nil // it holds the run's result and limiters
		if max(cap(s.heap), cap(s.live), cap(s.idle), cap(s.sems)) > maxPooledSlice {
			pp.sched = nil
		} else {
			for _, m := range s.sems { // their queues go to pp.queues next run
				if cap(m.q) > maxPooledSlice {
					m.q, m.head = nil, 0
				}
			}
		}
	}
	if cap(pp.Times) > maxPooledTimes {
		pp.Times = nil
	}
	keep := pp.queues[:0]
	for _, q := range pp.queues {
		if cap(q) <= maxPooledSlice {
			keep = append(keep, q)
		}
	}
	clear(pp.queues[len(keep):])
	pp.queues = keep
}

// runDetached runs f on a goroutine of its own and waits for it, passing
// on its panic or runtime.Goexit. A coroutine may be resumed (or stopped)
// on a goroutine locked to its OS thread only if it was made there, and
// the callers' coroutines of a cold pool serve runs of any goroutine;
// this one is never locked.
func runDetached(f func()) {
	var (
		done     = make(chan struct{})
		pv       any
		returned bool
	)
	go func() {
		defer close(done)
		defer func() {
			if !returned {
				pv = recover()
			}
		}()
		f()
		returned = true
	}()
	<-done
	switch {
	case returned:
	case pv != nil:
		panic(pv)
	default:
		runtime.Goexit()
	}
}

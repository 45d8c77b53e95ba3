package virtual

import (
	"context"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/rlcheck/rlcheck/clock"
)

// ErrDeadline is what a parked caller gets when its virtual deadline (see
// WithDeadline) passes first; it is context.DeadlineExceeded, so errors.Is
// works as on the real clock.
var ErrDeadline = context.DeadlineExceeded

// errAbandoned unwinds a coroutine the scheduler gives up on (a caller still
// parked when no event is left).
var errAbandoned = errors.New("virtual: caller abandoned")

// A Drawer draws one non-negative duration from r each time it is asked;
// the scenario model's *Dist is one.
type Drawer interface {
	Draw(r *rand.Rand) time.Duration
}

// Config is the runtime model of one run.
type Config struct {
	// Lateness is drawn each time the loop must wait for its next timer: it
	// wakes that much after the timer's instant (never early). Nil is zero.
	Lateness Drawer
	// OpCost is drawn after every caller step, from a resume to its next
	// park, and advances the clock by it. Nil is zero.
	OpCost Drawer
	// Rand is the run's only random source; nil means a fixed seed of 0.
	Rand *rand.Rand
}

// Stats are the scheduler's own counters.
type Stats struct {
	Steps      int64 // caller resumptions
	LoopWaits  int64 // times the loop waited for a timer
	Lateness   time.Duration
	EarlyWakes int64 // sleepers resumed before their instant; always 0
	Abandoned  int64 // callers still parked when the run ended
}

// Sched is the virtual clock.Runtime: a discrete-event scheduler whose
// callers are coroutines (iter.Pull), so strategy code written for the real
// clock runs unchanged and one caller at a time. It is not safe for use from
// goroutines other than the ones it runs.
type Sched struct {
	now  int64
	seq  uint64
	heap evHeap
	// arrival is the one pending arrival event (p nil), which starts
	// caller arrivalIdx; it is kept out of heap, valid while hasArrival.
	arrival    event
	arrivalIdx int64
	hasArrival bool
	cur        *proc
	cfg        Config
	rng        *rand.Rand
	live       []*proc // callers started and not finished
	idle       []*proc // coroutines whose caller finished, for reuse
	stats      Stats
	body       func(i int64) // the caller started by arrival i
	times      []int64
	pool       *Pool   // where finished coroutines go after Run, if set
	sems       []*vsem // with a pool: the run's semaphores, whose queues the next run reuses
}

// Pool keeps the coroutines of finished runs for the next run on the
// same goroutine: a run of a small scenario spends most of its allocations
// starting coroutines. Its zero value is an empty pool that one goroutine
// uses; TakePool hands out pools any goroutine may use. Close stops them.
type Pool struct {
	idle   []*proc
	sched  *Sched     // the last run's scheduler, whose slices the next reuses
	queues [][]waiter // semaphore queues of past runs
	// Times is the last run's arrival times, for the next run to reuse.
	Times []int64
	// Resource is what the runs on this pool share beyond a run (an
	// in-process server); Close closes it. Runs on a pool of TakePool
	// must keep none.
	Resource io.Closer
	// cold marks a pool of coldPools: its runs keep no Resource and
	// resume their callers on a goroutine of their own (runDetached).
	cold bool
}

// Cold reports whether pp came from TakePool: it then serves runs of any
// goroutine, and a run on it must leave no Resource behind.
func (pp *Pool) Cold() bool { return pp.cold }

// NewSched returns a scheduler at instant 0 that takes its coroutines from
// the pool, reusing the pool's last scheduler.
func (pp *Pool) NewSched(cfg Config) *Sched {
	s := pp.sched
	if s == nil {
		s = NewSched(cfg)
		s.pool = pp
		pp.sched = s
		return s
	}
	for _, m := range s.sems {
		clear(m.q[:cap(m.q)])
		pp.queues = append(pp.queues, m.q[:0])
	}
	*s = Sched{
		heap: s.heap[:0], live: s.live[:0], idle: s.idle[:0], sems: s.sems[:0],
		cfg: cfg, rng: cfg.Rand, pool: pp,
	}
	if s.rng == nil {
		s.rng = rand.New(rand.NewPCG(0, 0))
	}
	return s
}

// Close stops the pool's coroutines, those of a run that did not end
// (it panicked) too, and closes its Resource.
func (pp *Pool) Close() {
	if s := pp.sched; s != nil {
		for _, p := range s.live {
			p.stop()
		}
		for _, p := range s.idle {
			p.stop()
		}
		pp.sched = nil
	}
	for _, p := range pp.idle {
		p.stop()
	}
	pp.idle = nil
	if pp.Resource != nil {
		_ = pp.Resource.Close()
		pp.Resource = nil
	}
}

// NewSched returns a scheduler at instant 0.
func NewSched(cfg Config) *Sched {
	rng := cfg.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	return &Sched{cfg: cfg, rng: rng}
}

type proc struct {
	hidx     int         // position of the caller's pending event in Sched.heap, or -1
	idx      int         // position in Sched.live
	task     func(int64) // the caller's body, run with arg
	arg      int64
	finished bool   // task has returned; the coroutine waits for another
	waitGen  uint64 // numbers the caller's semaphore waits (see vsem)
	granted  bool   // a semaphore handed this caller a slot
	mark     int64  // the instant a limiter admitted the caller, when marked
	marked   bool
	next     func() (struct{}, bool)
	stop     func()
	yield    func(struct{}) bool
}

type event struct {
	at  int64
	seq uint64
	p   *proc // nil for an arrival
}

// Now returns the virtual instant.
func (s *Sched) Now() int64 { return s.now }

// Rand returns the run's random source, for callers drawing their own
// choices (call durations) in step order.
func (s *Sched) Rand() *rand.Rand { return s.rng }

// Mark records at as the running caller's mark (the instant a limiter's
// server admitted it, say), for the caller's body to read with Marked.
func (s *Sched) Mark(at int64) { s.cur.mark, s.cur.marked = at, true }

// Unmark forgets the running caller's mark.
func (s *Sched) Unmark() { s.cur.marked = false }

// Marked returns the running caller's mark, if it has one.
func (s *Sched) Marked() (int64, bool) { return s.cur.mark, s.cur.marked }

// Stats returns the scheduler's counters.
func (s *Sched) Stats() Stats { return s.stats }

// Go starts f as a new caller at instant at (not before now).
func (s *Sched) Go(at int64, f func()) {
	s.push(max(at, s.now), s.newProc(func(int64) { f() }, 0))
}

// Arrivals makes the scheduler start body(i) as a caller at times[i] (in
// non-decreasing order), keeping a single pending arrival event whatever the
// number of callers, so a million callers never exist at once.
func (s *Sched) Arrivals(times []int64, body func(i int64)) {
	s.times, s.body = times, body
	if len(times) > 0 {
		s.pushArrival(times[0], 0)
	}
}

// newProc returns a caller coroutine ready to run f, reusing one whose
// previous caller has finished: starting a coroutine costs several
// switches (see docs/benchmarks.md).
func (s *Sched) newProc(f func(int64), arg int64) *proc {
	var p *proc
	if n := len(s.idle); n > 0 {
		p = s.idle[n-1]
		s.idle = s.idle[:n-1]
	} else if pp := s.pool; pp != nil && len(pp.idle) > 0 {
		p = pp.idle[len(pp.idle)-1]
		pp.idle = pp.idle[:len(pp.idle)-1]
	} else {
		p = &proc{hidx: -1}
		p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
			p.yield = yield
			defer func() {
				if r := recover(); r != nil && r != errAbandoned {
					panic(r)
				}
			}()
			for {
				task := p.task
				p.task = nil
				task(p.arg)
				p.finished = true
				if !yield(struct{}{}) {
					return
				}
			}
		})
	}
	p.task, p.arg = f, arg
	p.idx = len(s.live)
	s.live = append(s.live, p)
	return p
}

func (s *Sched) retire(p *proc) {
	last := s.live[len(s.live)-1]
	s.live[p.idx] = last
	last.idx = p.idx
	s.live = s.live[:len(s.live)-1]
}

func (s *Sched) push(at int64, p *proc) {
	s.seq++
	s.heap.set(event{at: at, seq: s.seq, p: p})
}

func (s *Sched) pushArrival(at int64, i int64) {
	s.seq++
	s.arrival = event{at: max(at, s.now), seq: s.seq}
	s.arrivalIdx, s.hasArrival = i, true
}

// next removes and returns the first pending event, the arrival included.
func (s *Sched) next() event {
	if s.hasArrival && (len(s.heap) == 0 || s.arrival.before(s.heap[0])) {
		s.hasArrival = false
		return s.arrival
	}
	return s.heap.pop()
}

// park suspends the running caller until an event resumes it.
func (s *Sched) park() {
	p := s.cur
	if p == nil {
		panic("virtual: a wait outside a caller of the scheduler")
	}
	if !p.yield(struct{}{}) {
		panic(errAbandoned)
	}
}

// Run processes events until none is left, then abandons callers parked for
// good (waiting on a lock nobody will release).
func (s *Sched) Run() {
	for len(s.heap) > 0 || s.hasArrival {
		ev := s.next()
		if ev.at > s.now {
			s.now = ev.at
			if s.cfg.Lateness != nil {
				if l := s.cfg.Lateness.Draw(s.rng); l > 0 {
					s.now += int64(l)
					s.stats.Lateness += l
				}
			}
			s.stats.LoopWaits++
		}
		p := ev.p
		if p == nil {
			i := s.arrivalIdx
			if i+1 < int64(len(s.times)) {
				s.pushArrival(s.times[i+1], i+1)
			}
			p = s.newProc(s.body, i)
		}
		s.step(p)
	}
	for len(s.live) > 0 {
		p := s.live[len(s.live)-1]
		s.retire(p)
		s.stats.Abandoned++
		p.stop()
	}
	if s.pool != nil {
		for _, p := range s.idle {
			p.hidx, p.mark, p.marked = -1, 0, false
		}
		s.pool.idle = append(s.pool.idle, s.idle...)
		s.idle = s.idle[:0]
		return
	}
	for _, p := range s.idle {
		p.stop()
	}
	s.idle = nil
}

func (s *Sched) step(p *proc) {
	s.cur = p
	s.stats.Steps++
	p.next()
	s.cur = nil
	if p.finished {
		p.finished = false
		s.retire(p)
		s.idle = append(s.idle, p)
	}
	if s.cfg.OpCost != nil {
		if c := s.cfg.OpCost.Draw(s.rng); c > 0 {
			s.now += int64(c)
		}
	}
}

// Sleep parks the caller until now+d, or until its virtual deadline when
// that comes first (then it returns ErrDeadline).
func (s *Sched) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, hasDL := Deadline(ctx)
	if hasDL && s.now >= dl {
		return ErrDeadline
	}
	if d <= 0 {
		return nil
	}
	wake := s.now + int64(d)
	timeout := hasDL && dl < wake
	if timeout {
		wake = dl
	}
	s.push(wake, s.cur)
	s.park()
	if s.now < wake {
		s.stats.EarlyWakes++
	}
	if timeout {
		return ErrDeadline
	}
	return nil
}

// Left returns the time before ctx's virtual deadline (see WithDeadline),
// the only deadline Sleep honours, so that a limiter refuses at once a wait
// Sleep would cut short.
func (s *Sched) Left(ctx context.Context) (time.Duration, bool) {
	dl, ok := Deadline(ctx)
	if !ok {
		return 0, false
	}
	return time.Duration(dl - s.now), true
}

// NewMutex returns a FIFO mutex that parks on the scheduler.
func (s *Sched) NewMutex() clock.Mutex { return s.newSem(1) }

// NewSemaphore returns a FIFO semaphore with n slots.
func (s *Sched) NewSemaphore(n int) clock.Semaphore { return s.newSem(n) }

func (s *Sched) newSem(n int) *vsem {
	m := &vsem{s: s, free: n}
	if pp := s.pool; pp != nil {
		if k := len(pp.queues); k > 0 {
			m.q, pp.queues = pp.queues[k-1], pp.queues[:k-1]
		}
		s.sems = append(s.sems, m)
	}
	return m
}

// View returns the runtime as seen by a worker whose clock reads skew ahead
// of the true virtual time; sleeping and locking are unchanged.
func (s *Sched) View(skew time.Duration) clock.Runtime {
	if skew == 0 {
		return s
	}
	return view{s: s, skew: int64(skew)}
}

// Of returns the scheduler behind rt, a Sched or one of its views, or nil
// when rt is not virtual.
func Of(rt clock.Runtime) *Sched {
	switch v := rt.(type) {
	case *Sched:
		return v
	case view:
		return v.s
	}
	return nil
}

type view struct {
	s    *Sched
	skew int64
}

func (v view) Now() int64                                       { return v.s.now + v.skew }
func (v view) Sleep(ctx context.Context, d time.Duration) error { return v.s.Sleep(ctx, d) }
func (v view) NewMutex() clock.Mutex                            { return v.s.NewMutex() }
func (v view) Left(ctx context.Context) (time.Duration, bool)   { return v.s.Left(ctx) }
func (v view) NewSemaphore(n int) clock.Semaphore               { return v.s.NewSemaphore(n) }

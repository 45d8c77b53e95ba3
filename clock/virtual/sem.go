package virtual

import "context"

// vsem is the virtual FIFO semaphore (a mutex when it has one slot). A
// released slot passes straight to the oldest caller still waiting, which
// resumes at the current instant, as a ready callback would on an event
// loop.
type vsem struct {
	s    *Sched
	free int
	q    []waiter
	head int
}

// waiter is a queued wait; it is stale once its caller stopped waiting
// (granted or timed out), which its generation tells, so a wait allocates
// nothing.
type waiter struct {
	p   *proc
	gen uint64
}

func (m *vsem) Lock(ctx context.Context) error { return m.Acquire(ctx) }
func (m *vsem) Unlock()                        { m.Release() }

// Acquire takes a slot, parking in arrival order; at the caller's virtual
// deadline it gives up, holding nothing.
func (m *vsem) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, hasDL := Deadline(ctx)
	if hasDL && m.s.now >= dl {
		return ErrDeadline
	}
	if m.free > 0 {
		m.free--
		return nil
	}
	p := m.s.cur
	if p == nil {
		panic("virtual: a wait outside a caller of the scheduler")
	}
	p.waitGen++
	p.granted = false
	m.q = append(m.q, waiter{p: p, gen: p.waitGen})
	if hasDL {
		m.s.push(dl, p)
	}
	m.s.park()
	p.waitGen++ // whatever woke us, this wait is over
	if p.granted {
		p.granted = false
		return nil
	}
	return ErrDeadline
}

// Release hands the slot to the oldest caller still waiting, or frees it.
func (m *vsem) Release() {
	for m.head < len(m.q) {
		w := m.q[m.head]
		m.q[m.head] = waiter{}
		m.head++
		if w.gen != w.p.waitGen || w.p.granted {
			continue // gave up, or already served
		}
		w.p.granted = true
		m.s.push(m.s.now, w.p)
		m.compact()
		return
	}
	m.q, m.head = m.q[:0], 0
	m.free++
}

// compact drops the consumed front of the queue once it dominates.
func (m *vsem) compact() {
	if m.head > 64 && m.head*2 > len(m.q) {
		n := copy(m.q, m.q[m.head:])
		clear(m.q[n:])
		m.q, m.head = m.q[:n], 0
	}
}

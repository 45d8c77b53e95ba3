package rlchecktest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Recorder captures the instant each call is sent, its costs when the
// rules meter any, and the instant it completed, so that a test can
// check an in-flight cap (AssertInFlight) beside the rates. It is safe
// for concurrent use; the zero value is ready to use.
type Recorder struct {
	mu    sync.Mutex
	sends []send
}

// send is one recorded call: its instant, and its costs per unit (nil
// when recorded without).
type send struct {
	at    time.Time
	done  time.Time // zero while the call is in flight
	costs []int64
}

// Record notes the send time, calls f, and notes its completion when f
// returns, returning f's error. The send instant is taken before f runs,
// because a provider counts a call when it arrives, not when its answer
// does; the call is in flight until f returns.
func (r *Recorder) Record(f func() error) error {
	i := r.add(time.Now(), nil)
	defer r.complete(i)
	return f()
}

// RecordCost is Record for a call that costs costs[u] in the u-th unit
// (the units WriteCSV is given, in the order rule.Units names them),
// so that the log carries what cost rules such as 90000 tokens/1m meter.
func (r *Recorder) RecordCost(costs []int64, f func() error) error {
	i := r.add(time.Now(), slices.Clone(costs))
	defer r.complete(i)
	return f()
}

// add records a send and returns its index.
func (r *Recorder) add(t time.Time, costs []int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends = append(r.sends, send{at: t, costs: costs})
	return len(r.sends) - 1
}

// complete notes that send i has completed now (a Reset since leaves
// nothing to note).
func (r *Recorder) complete(i int) {
	now := time.Now()
	r.mu.Lock()
	if i < len(r.sends) {
		r.sends[i].done = now
	}
	r.mu.Unlock()
}

// Transport wraps next (http.DefaultTransport when nil) so that every
// request it carries is recorded as it is sent, failed requests included:
// a request that reached the provider counts against the limit whatever
// became of its answer.
func (r *Recorder) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return roundTripper{r: r, next: next}
}

type roundTripper struct {
	r    *Recorder
	next http.RoundTripper
}

// RoundTrip records the request as sent, and as completed when the
// answer's headers (or an error) come back.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	i := rt.r.add(time.Now(), nil)
	defer rt.r.complete(i)
	return rt.next.RoundTrip(req)
}

// Sends returns a copy of the recorded instants in time order.
func (r *Recorder) Sends() []time.Time {
	sends := r.sorted()
	out := make([]time.Time, len(sends))
	for i, s := range sends {
		out[i] = s.at
	}
	return out
}

// sorted returns a copy of the recorded sends in time order, equal
// instants in the order they were recorded.
func (r *Recorder) sorted() []send {
	r.mu.Lock()
	out := slices.Clone(r.sends)
	r.mu.Unlock()
	slices.SortStableFunc(out, func(a, b send) int { return a.at.Compare(b.at) })
	return out
}

// WriteCSV writes the recorded sends in time order as the CSV log that
// rlcheck check reads, so that a test's sends can be judged (and kept) as
// CI's artifact: a header ts_ns and one column per unit, named as the
// unit, then each send's epoch nanoseconds and its costs. With units, every
// send must have been recorded with RecordCost and as many costs.
func (r *Recorder) WriteCSV(w io.Writer, units ...string) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("ts_ns")
	for _, u := range units {
		if u == "" || strings.ContainsAny(u, ",\"\r\n") {
			return fmt.Errorf("rlchecktest: unit %q cannot name a CSV column", u)
		}
		bw.WriteString("," + u)
	}
	bw.WriteByte('\n')
	for i, s := range r.sorted() {
		if len(units) > 0 && len(s.costs) != len(units) {
			return fmt.Errorf("rlchecktest: send %d (at %s) has %d costs for %d units %v: record it with RecordCost",
				i+1, s.at.Format(time.RFC3339Nano), len(s.costs), len(units), units)
		}
		bw.WriteString(strconv.FormatInt(s.at.UnixNano(), 10))
		for _, c := range s.costs[:len(units)] {
			bw.WriteString("," + strconv.FormatInt(c, 10))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Len returns the number of calls recorded so far.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sends)
}

// Reset forgets every recorded call.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.sends = nil
	r.mu.Unlock()
}

// AssertCompliant is AssertCompliant over the calls recorded so far.
func (r *Recorder) AssertCompliant(t TB, rules ...rule.Rule) bool {
	t.Helper()
	return AssertCompliant(t, r.Sends(), rules...)
}

// MaxInFlight returns the largest number of recorded calls in flight at
// once, and the first instant it was reached. A call is in flight from
// its send to its completion, the half-open span [sent, done): a call
// completing at the very instant another is sent has freed its place. A
// call not yet completed is in flight to the end.
func (r *Recorder) MaxInFlight() (int, time.Time) {
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, s := range r.sorted() {
		edges = append(edges, edge{s.at, 1})
		if !s.done.IsZero() {
			edges = append(edges, edge{s.done, -1})
		}
	}
	slices.SortStableFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.d - b.d // completions first
	})
	n, most, when := 0, 0, time.Time{}
	for _, e := range edges {
		if n += e.d; n > most {
			most, when = n, e.at
		}
	}
	return most, when
}

// AssertInFlight reports through t, and returns false, when more than
// limit recorded calls were in flight at once (see MaxInFlight): the
// check of a contract's in-flight cap.
func (r *Recorder) AssertInFlight(t TB, limit int) bool {
	t.Helper()
	most, when := r.MaxInFlight()
	if most > limit {
		t.Errorf("rlchecktest: %d calls in flight at %s, above the cap of %d", most, when.Format(time.RFC3339Nano), limit)
		return false
	}
	return true
}

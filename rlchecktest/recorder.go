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

// Recorder captures the instant each call is sent, and its costs when
// the rules meter any. It is safe for concurrent use; the zero value is
// ready to use.
type Recorder struct {
	mu    sync.Mutex
	sends []send
}

// send is one recorded call: its instant, and its costs per unit (nil
// when recorded without).
type send struct {
	at    time.Time
	costs []int64
}

// Record notes the send time and then calls f, returning its error. The
// instant is taken before f runs, because a provider counts a call when it
// arrives, not when its answer does.
func (r *Recorder) Record(f func() error) error {
	r.add(time.Now(), nil)
	return f()
}

// RecordCost is Record for a call that costs costs[u] in the u-th unit
// (the units WriteCSV is given, in the order rule.Units names them),
// so that the log carries what cost rules such as 90000 tokens/1m meter.
func (r *Recorder) RecordCost(costs []int64, f func() error) error {
	r.add(time.Now(), slices.Clone(costs))
	return f()
}

func (r *Recorder) add(t time.Time, costs []int64) {
	r.mu.Lock()
	r.sends = append(r.sends, send{at: t, costs: costs})
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

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.r.add(time.Now(), nil)
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

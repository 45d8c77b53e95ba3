package rlchecktest

import (
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Recorder captures the instant each call is sent. It is safe for
// concurrent use; the zero value is ready to use.
type Recorder struct {
	mu    sync.Mutex
	sends []time.Time
}

// Record notes the send time and then calls f, returning its error. The
// instant is taken before f runs, because a provider counts a call when it
// arrives, not when its answer does.
func (r *Recorder) Record(f func() error) error {
	r.add(time.Now())
	return f()
}

func (r *Recorder) add(t time.Time) {
	r.mu.Lock()
	r.sends = append(r.sends, t)
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
	rt.r.add(time.Now())
	return rt.next.RoundTrip(req)
}

// Sends returns a copy of the recorded instants in time order.
func (r *Recorder) Sends() []time.Time {
	r.mu.Lock()
	out := slices.Clone(r.sends)
	r.mu.Unlock()
	slices.SortStableFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
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

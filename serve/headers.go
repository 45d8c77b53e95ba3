package serve

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// The RateLimit fields follow draft-ietf-httpapi-ratelimit-headers-12,
// "RateLimit header fields for HTTP"
// (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/).
// Both are Structured Field Lists with one member per rule, named by a
// quoted policy identifier:
//
//	RateLimit-Policy: "10-per-1s";q=10;w=1, "500-per-1m";q=500;w=60
//	RateLimit: "10-per-1s";r=0;t=1, "500-per-1m";r=480
//
// q is the quota, w the window in whole seconds (left out for a window that
// is not a whole number of seconds: the draft has no finer unit), r the
// quota remaining after this request and t the seconds, rounded up, until a
// slot frees (given when r is 0).
//
// A cost rule's policy names its unit, and its quota is in that unit
// (qu="tokens"); a fixed, first-call or bucket rule's names its kind
// ("3-per-1s-fixed", "2-per-1s-burst-4"). A bucket's quota is its burst,
// its window the time one refill of Limit units takes (refill=Limit). Only
// sliding call rules are listed in RateLimit on every answer; so are fixed
// and first-call rules, with t the seconds until their window resets; the
// others are listed there, with r=0 and t, when the request broke them.

// policyName is a rule's policy identifier, "10-per-1s".
func policyName(r rule.Rule) string {
	n := fmt.Sprintf("%d-per-%s", r.Limit, rule.FormatWindow(r.Window))
	if r.Unit != "" {
		n = fmt.Sprintf("%d-%s-per-%s", r.Limit, r.Unit, rule.FormatWindow(r.Window))
	}
	switch r.Kind {
	case rule.Fixed, rule.FirstCall:
		n += "-" + r.Kind.String()
	case rule.Bucket:
		n += fmt.Sprintf("-burst-%d", r.Burst)
	}
	return n
}

// policyField returns the RateLimit-Policy value for rules.
func policyField(rules []rule.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = fmt.Sprintf("%q;q=%d", policyName(r), capacity(r))
		if r.Window%time.Second == 0 {
			parts[i] += fmt.Sprintf(";w=%d", r.Window/time.Second)
		}
		if r.Unit != "" {
			parts[i] += fmt.Sprintf(";qu=%q", r.Unit)
		}
		if r.Kind == rule.Bucket {
			parts[i] += fmt.Sprintf(";refill=%d", r.Limit)
		}
	}
	return strings.Join(parts, ", ")
}

// ceilSeconds rounds a wait up to whole seconds, at least 1.
func ceilSeconds(d int64) int64 {
	return max(1, d/int64(time.Second)+min(1, d%int64(time.Second)))
}

// rateHeaders fills a's RateLimit fields and, for a request that broke
// the contract, the wait until it would be admitted. a.k.mu must be held.
func (s *Server) rateHeaders(a *arrival) {
	if a.violates() {
		a.wait = s.admitWait(a)
		a.retryAfter = ceilSeconds(a.wait)
	}
	if len(s.opt.Rules) == 0 {
		return
	}
	b := make([]byte, 0, 32*len(s.opt.Rules))
	for i, r := range s.opt.Rules {
		if !r.SlidingCalls() {
			b = s.slowHeader(b, a, i)
			continue
		}
		n, free := a.k.chk.InWindow(i, a.at)
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		left := max(int64(r.Limit)-n, 0)
		b = append(b, s.names[i]...)
		b = append(b, ";r="...)
		b = strconv.AppendInt(b, left, 10)
		if left == 0 {
			wait := free.At + int64(r.Window) - a.at
			if s.opt.Boundary == rule.Closed {
				wait++
			}
			b = append(b, ";t="...)
			b = strconv.AppendInt(b, ceilSeconds(wait), 10)
		}
	}
	a.rateLimit = string(b)
}

// admitWait is how long after its arrival the same request would be
// admitted by every rule at once, this one counted in their windows as
// the provider counts it (1 s at least for the in-flight cap, whose slots
// free when answers leave). Each rule's earliest instant only grows the
// later it is asked, so the latest of them is the earliest for all.
func (s *Server) admitWait(a *arrival) int64 {
	var wait int64
	if a.overCap {
		wait = int64(time.Second)
	}
	for i := range s.opt.Rules {
		next := a.k.chk.Next(i, a.at, s.costIn(a, i))
		if next == checker.Never {
			return checker.Never - a.at
		}
		wait = max(wait, next-a.at)
	}
	return wait
}

// costIn is a's cost in rule i's unit, 1 for a call rule.
func (s *Server) costIn(a *arrival, i int) int64 {
	if u := s.unitOf[i]; u >= 0 && a.costs != nil {
		return a.costs[u]
	}
	return 1
}

// slowHeader adds rule i, judged by the checker's slow path, to the
// RateLimit field when a broke it, with the wait until the rule would
// admit the same request: the end of a fixed or first-call window; for a
// bucket, the time its level takes to refill to the request's cost; for a
// sliding cost rule, until enough of the sends in its window, this one
// included, have left. a.k.mu must be held.
func (s *Server) slowHeader(b []byte, a *arrival, i int) []byte {
	if sp, units, ok := a.k.chk.CurrentWindow(i); ok {
		return s.windowHeader(b, a, i, sp, units)
	}
	for _, br := range a.broken {
		if br.rule != i {
			continue
		}
		t := ceilSeconds(a.k.chk.Next(i, a.at, s.costIn(a, i)) - a.at)
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s.names[i]...)
		b = append(b, ";r=0;t="...)
		b = strconv.AppendInt(b, t, 10)
	}
	return b
}

// windowHeader adds fixed or first-call rule i to the RateLimit field on
// every answer: what remains of its current window, which holds units
// after this request, and the seconds until the window resets (its end);
// a request that broke it waits for that reset.
func (s *Server) windowHeader(b []byte, a *arrival, i int, sp checker.Span, units int64) []byte {
	t := ceilSeconds(sp.To - a.at)
	if len(b) > 0 {
		b = append(b, ", "...)
	}
	b = append(b, s.names[i]...)
	b = append(b, ";r="...)
	b = strconv.AppendInt(b, max(int64(s.opt.Rules[i].Limit)-units, 0), 10)
	b = append(b, ";t="...)
	return strconv.AppendInt(b, t, 10)
}

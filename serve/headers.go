package serve

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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

// policyName is a rule's policy identifier, "10-per-1s".
func policyName(r rule.Rule) string {
	return fmt.Sprintf("%d-per-%s", r.Limit, rule.FormatWindow(r.Window))
}

// policyField returns the RateLimit-Policy value for rules.
func policyField(rules []rule.Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = fmt.Sprintf("%q;q=%d", policyName(r), r.Limit)
		if r.Window%time.Second == 0 {
			parts[i] += fmt.Sprintf(";w=%d", r.Window/time.Second)
		}
	}
	return strings.Join(parts, ", ")
}

// ceilSeconds rounds a wait up to whole seconds, at least 1.
func ceilSeconds(d int64) int64 {
	return max(1, (d+int64(time.Second)-1)/int64(time.Second))
}

// rateHeaders fills a's RateLimit fields and the Retry-After it would get:
// the longest wait, over the rules it broke, until their windows free a
// slot (1 s for the in-flight cap alone). a.k.mu must be held.
func (s *Server) rateHeaders(a *arrival) {
	if len(s.opt.Rules) == 0 {
		if a.overCap {
			a.retryAfter = 1
		}
		return
	}
	b := make([]byte, 0, 32*len(s.opt.Rules))
	for i, r := range s.opt.Rules {
		n, free := a.k.chk.InWindow(i, a.at)
		if i > 0 {
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
			t := ceilSeconds(wait)
			b = append(b, ";t="...)
			b = strconv.AppendInt(b, t, 10)
			for _, br := range a.broken {
				if br.rule == i {
					a.retryAfter = max(a.retryAfter, t)
				}
			}
		}
	}
	if a.overCap {
		a.retryAfter = max(a.retryAfter, 1)
	}
	a.rateLimit = string(b)
}

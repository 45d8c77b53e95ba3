package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// A preset's answers: the completion body, the errors and the rate-limit
// header family of its provider, computed exactly from the rules as the
// RateLimit fields are (see docs/providers.md).

// category names the family a rule's headers belong to: requests for a
// call rule, else its unit, dashed (input-tokens).
func category(r rule.Rule) string {
	if r.Unit == "" {
		return "requests"
	}
	return strings.ReplaceAll(r.Unit, "_", "-")
}

// bound is the rule of a category with the least remaining: the one the
// family's headers describe.
type bound struct {
	cat         string
	limit, left int64
	reset       int64 // ns until the rule holds none of the requests so far
}

// familyHeaders returns the provider's rate-limit headers for a, one set
// per category, in the order the rules first name them. a.k.mu must be
// held.
func (s *Server) familyHeaders(a *arrival) [][2]string {
	var bs []bound
	for i, r := range s.opt.Rules {
		limit := capacity(r)
		b := bound{cat: category(r), limit: limit, left: max(limit-a.k.chk.Load(i, a.at), 0)}
		b.reset = a.k.chk.Next(i, a.at, limit) - a.at
		k := 0
		for k < len(bs) && bs[k].cat != b.cat {
			k++
		}
		switch {
		case k == len(bs):
			bs = append(bs, b)
		case b.left < bs[k].left:
			bs[k] = b
		}
	}
	var h [][2]string
	for _, b := range bs {
		lim, left := strconv.FormatInt(b.limit, 10), strconv.FormatInt(b.left, 10)
		if s.opt.Provider == Anthropic {
			reset := time.Unix(0, a.at+ceilTo(b.reset, int64(time.Second))).Truncate(time.Second).UTC().Format(time.RFC3339)
			p := "anthropic-ratelimit-" + b.cat
			h = append(h, [2]string{p + "-limit", lim}, [2]string{p + "-remaining", left}, [2]string{p + "-reset", reset})
			continue
		}
		h = append(h, [2]string{"x-ratelimit-limit-" + b.cat, lim}, [2]string{"x-ratelimit-remaining-" + b.cat, left},
			[2]string{"x-ratelimit-reset-" + b.cat, time.Duration(ceilTo(b.reset, int64(time.Millisecond))).String()})
	}
	return h
}

// ceilTo rounds d, from 0 up, up to a whole number of units.
func ceilTo(d, unit int64) int64 {
	return d/unit*unit + min(1, d%unit)*unit
}

// rejectDialect answers a request that broke the contract as the
// provider does: 429 with the wait until it would be admitted.
func (s *Server) rejectDialect(w http.ResponseWriter, a *arrival) {
	retry := [][2]string{{"retry-after", strconv.FormatInt(a.retryAfter, 10)}}
	if s.opt.Provider != Anthropic {
		retry = append(retry, [2]string{"retry-after-ms", strconv.FormatInt(ceilTo(a.wait, int64(time.Millisecond))/int64(time.Millisecond), 10)})
	}
	h := w.Header()
	for _, kv := range retry {
		h.Set(kv[0], kv[1])
	}
	a.answer = s.presetAnswer(a, retry)
	s.end(a, http.StatusTooManyRequests)
	kind, msg := "requests", "too many requests in flight"
	if len(a.broken) > 0 {
		r := s.opt.Rules[a.broken[0].rule]
		if r.Unit != "" {
			kind = "tokens"
		}
		msg = fmt.Sprintf("Rate limit reached for %s: %s (rlcheck serve, log line %d)", category(r), r, a.seq+2)
	}
	msg += fmt.Sprintf(". Please try again in %v.", time.Duration(ceilTo(a.wait, int64(time.Millisecond))))
	s.writeError(w, http.StatusTooManyRequests, kind, "rate_limit_exceeded", msg)
}

// writeError writes an error body of the provider's shape: OpenAI's
// {"error":{message,type,param,code}}, or Anthropic's
// {"type":"error","error":{type,message}}.
func (s *Server) writeError(w http.ResponseWriter, status int, kind, code, msg string) {
	var body any
	if s.opt.Provider == Anthropic {
		atype := map[int]string{429: "rate_limit_error", 413: "request_too_large"}[status]
		if atype == "" {
			atype = "invalid_request_error"
		}
		body = map[string]any{"type": "error", "error": map[string]string{"type": atype, "message": msg}}
	} else {
		var c any
		if code != "" {
			c = code
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": c}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// refuseDialect answers, in the provider's shape, a request refused
// before judging: a body it cannot read (400), or a cost no window could
// ever admit or judge (413).
func (s *Server) refuseDialect(w http.ResponseWriter, err error) {
	var ce *costError
	if !errors.As(err, &ce) {
		ce = &costError{http.StatusBadRequest, err.Error(), false}
	}
	if ce.counted {
		s.unjudged.Add(1)
	}
	code := ""
	if ce.status == http.StatusRequestEntityTooLarge {
		code = "request_too_large"
	}
	s.writeError(w, ce.status, "invalid_request_error", code, ce.msg)
}

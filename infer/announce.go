package infer

import (
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Headers sets what the provider's rate-limit headers announced beside
// what it did.
type Headers struct {
	// Answers counts the calls whose answer carried a rate-limit header.
	Answers int
	// Announced are the distinct limits announced, in order of first
	// appearance.
	Announced []Announcement
	// Added are the windows the headers name that the grid lacked: they
	// were inferred too.
	Added []time.Duration
	// RetryAfters counts the answers with a Retry-After, from RetryMin to
	// RetryMax.
	RetryAfters        int
	RetryMin, RetryMax time.Duration
	// Reading is the reading the counts below are made under: the one
	// that fits best.
	Reading Reading
	// RoomRefused counts the refused calls whose answer announced a
	// remaining call quota, every remaining quota above 0; the first on
	// RoomRefusedLine.
	RoomRefused     int
	RoomRefusedLine int64
	// Past holds, for every announced call limit with a window and each
	// kind, the accepted calls past it.
	Past []PastLimit
}

// Announcement is one limit announced and how often.
type Announcement struct {
	Limit
	Answers   int
	FirstLine int64
	lastCall  int // the index of the last call whose answer counted
}

// PastLimit counts the accepted calls that found N or more earlier calls
// in the window of an announced limit, read as a rule of one kind; the
// first on FirstLine.
type PastLimit struct {
	Rule      rule.Rule
	Accepted  int
	FirstLine int64
}

// collectHeaders gathers the announcements of the sorted calls; nil when
// no answer carried a header.
func collectHeaders(s []Send) *Headers {
	h := &Headers{}
	type key struct {
		n    int64
		w    time.Duration
		unit string
		from Header
	}
	seen := map[key]int{}
	for ci, c := range s {
		a := c.Ann
		if a == nil {
			continue
		}
		h.Answers++
		for _, l := range a.Limits {
			k := key{l.N, l.Window, l.Unit, l.From}
			i, ok := seen[k]
			if !ok {
				i = len(h.Announced)
				seen[k] = i
				h.Announced = append(h.Announced, Announcement{Limit: l, FirstLine: c.Line, lastCall: -1})
			}
			if an := &h.Announced[i]; an.lastCall != ci { // an answer naming a limit twice counts once
				an.Answers, an.lastCall = an.Answers+1, ci
			}
		}
		if a.HasRetry {
			if h.RetryAfters == 0 || a.RetryAfter < h.RetryMin {
				h.RetryMin = a.RetryAfter
			}
			h.RetryMax = max(h.RetryMax, a.RetryAfter)
			h.RetryAfters++
		}
		if c.Refused && a.RefusedWithRoom() {
			if h.RoomRefused++; h.RoomRefused == 1 {
				h.RoomRefusedLine = c.Line
			}
		}
	}
	if h.Answers == 0 {
		return nil
	}
	return h
}

// callRules are the announced limits on calls with a window, as rules of
// each kind, each once.
func (h *Headers) callRules() []rule.Rule {
	var out []rule.Rule
	for _, a := range h.Announced {
		if a.Unit != "" || a.Window <= 0 || a.N <= 0 || a.N > 1<<31-1 {
			continue
		}
		for _, k := range windowKinds {
			r := rule.Rule{Limit: int(a.N), Window: a.Window, Kind: k}
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// grid adds the windows the announced limits name to windows.
func (h *Headers) grid(windows []time.Duration) []time.Duration {
	out := slices.Clone(windows)
	for _, r := range h.callRules() {
		if !slices.Contains(out, r.Window) {
			out = append(out, r.Window)
			h.Added = append(h.Added, r.Window)
		}
	}
	slices.Sort(out)
	return out
}

// judge counts the accepted calls past each announced limit under
// reading rd, with the counts the inference makes.
func (h *Headers) judge(d *sends, rd Reading) {
	h.Reading = rd
	for _, r := range h.callRules() {
		p := PastLimit{Rule: r}
		d.walk(int64(r.Window), r.Kind, func(i, lo int) {
			if d.refused[i] {
				return
			}
			before := i - lo
			if rd == RefusedFree {
				before = int(d.acc[i] - d.acc[lo])
			}
			if before >= r.Limit {
				if p.Accepted++; p.Accepted == 1 {
					p.FirstLine = d.line[i]
				}
			}
		})
		h.Past = append(h.Past, p)
	}
}

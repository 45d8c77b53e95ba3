package rule

import "fmt"

// Refusals says whether the calls a provider refused (429) count toward
// its later windows. Providers differ: OpenAI documents that refused
// requests count; others refund them. A log that records each call's
// status is judged under one reading (docs/semantics.md, refused calls).
type Refusals int

const (
	// RefusedCount: a refused call fills every window as any call does (a
	// bucket drains only where it had room), but is not judged itself.
	RefusedCount Refusals = iota
	// RefusedFree: a refused call takes nothing from any window.
	RefusedFree
)

func (r Refusals) String() string {
	if r == RefusedFree {
		return "refused calls do not count"
	}
	return "refused calls count"
}

// Word is the reading as contract files and flags write it: count or free.
func (r Refusals) Word() string {
	if r == RefusedFree {
		return "free"
	}
	return "count"
}

// ParseRefusals reads "count" or "free".
func ParseRefusals(s string) (Refusals, error) {
	switch s {
	case "count", "":
		return RefusedCount, nil
	case "free":
		return RefusedFree, nil
	}
	return 0, fmt.Errorf("refused calls %q: want count (refused calls count toward later windows) or free (they take nothing)", s)
}

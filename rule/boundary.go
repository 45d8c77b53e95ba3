package rule

import (
	"fmt"
	"time"
)

// Boundary says which ends of a window count.
type Boundary int

const (
	// HalfOpen counts sends in [t, t+W): a send exactly W after another is in
	// a new window. It is the default, and the guide's sliding log.
	HalfOpen Boundary = iota
	// Closed counts sends in [t, t+W]: some providers count both ends, so a
	// limiter spacing calls exactly W/N apart breaks a closed rule.
	Closed
)

// Within reports whether two sends gap apart share a window of length w.
func (b Boundary) Within(gap, w time.Duration) bool {
	if b == Closed {
		return gap <= w
	}
	return gap < w
}

func (b Boundary) String() string {
	if b == Closed {
		return "closed"
	}
	return "half-open"
}

// ParseBoundary reads "half-open" or "closed".
func ParseBoundary(s string) (Boundary, error) {
	switch s {
	case "half-open", "halfopen", "open", "":
		return HalfOpen, nil
	case "closed":
		return Closed, nil
	}
	return 0, fmt.Errorf("boundary %q: want half-open or closed", s)
}

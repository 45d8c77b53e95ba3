package infertest

import "os"

// Full reports whether RLCHECK_FULL=1 asks for the long run.
func Full() bool { return os.Getenv("RLCHECK_FULL") == "1" }

// Seeds is how many hidden contracts a recovery test draws: everyday, or
// full in the long run. The everyday seeds are the first of the full
// run's. A recovery share is asserted over the full run's seeds only:
// the everyday few check every seed's own invariants (the true reading
// fits, no bound past the truth) and report the share they reach.
func Seeds(everyday, full int) int {
	if Full() {
		return full
	}
	return everyday
}

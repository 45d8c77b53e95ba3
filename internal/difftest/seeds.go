package difftest

import "os"

// Seeds is how many seeds a differential test runs: everyday, or full
// when RLCHECK_FULL=1 asks for the long run.
func Seeds(everyday, full int) int {
	if os.Getenv("RLCHECK_FULL") == "1" {
		return full
	}
	return everyday
}

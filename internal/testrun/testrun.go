// Package testrun holds what the module's tests share about how long they
// run: whether RLCHECK_FULL=1 asks for the long run, how many seeds a
// randomised test draws each day and in the long run, and how many
// parallel tests a package that waits on servers runs at once. It is test
// support: nothing but tests imports it.
package testrun

import (
	"flag"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// Full reports whether RLCHECK_FULL=1 asks for the long run (.ci/run sets
// it).
func Full() bool { return os.Getenv("RLCHECK_FULL") == "1" }

// Seeds is everyday, or full in the long run. Tests draw seeds from 0, so
// the everyday seeds are the first of the long run's.
func Seeds[T ~int | ~int64 | ~uint64](everyday, full T) T {
	if Full() {
		return full
	}
	return everyday
}

// Main runs a package's tests and exits with their status. n > 0 lets up
// to n parallel tests run at once unless -test.parallel says otherwise:
// it is for packages whose parallel tests wait on servers, programs or the
// real clock rather than on the CPU, which GOMAXPROCS (go test's default
// parallelism) measures; n <= 0 keeps the default.
//
// Main also sets the collector's target to 400% unless GOGC is set, as
// simulate and audit do for themselves: the tests allocate fast over a
// small live heap, and collecting at 5x rather than 2x that heap cut
// scenarios' tests from 9.0 and 9.4 s of CPU to 6.6 and 6.9 s, infer's
// from 12.4 and 12.3 s to 11.0 and 11.1 s (one test binary each, GOGC=100
// and 400 alternated, a quiet 2-core machine at load 1.2 to 1.8). A test that
// measures the heap calls runtime.GC first and is not affected; a run of
// benchmarks keeps the default, so that they measure the program as it
// runs.
func Main(m *testing.M, n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && n > 0 {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
	if os.Getenv("GOGC") == "" && flag.Lookup("test.bench").Value.String() == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}

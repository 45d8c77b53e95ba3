// Package testrun holds what the module's tests share about how long they
// run: whether RLCHECK_FULL=1 asks for the long run, how many seeds a
// randomised test draws each day and in the long run, and how many
// parallel tests a package that waits on servers runs at once. It is test
// support: nothing but tests imports it.
package testrun

import (
	"flag"
	"os"
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

// Main runs a package's tests with up to n parallel tests at once unless
// -test.parallel says otherwise, and exits with their status. It is for
// packages whose parallel tests wait on servers, programs or the real
// clock rather than on the CPU, which GOMAXPROCS (go test's default
// parallelism) measures.
func Main(m *testing.M, n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
	os.Exit(m.Run())
}

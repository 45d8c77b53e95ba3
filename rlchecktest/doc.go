// Package rlchecktest lets a service's own tests prove that the calls it
// made kept every rate limit: record real send times with a Recorder (around
// an http.RoundTripper or any call), then AssertCompliant fails the test
// with the first offending window spelled out.
//
// The verdict comes from the checker package, the same oracle that judges
// send logs and simulations, under the half-open window [t, t+W).
//
// The assertions take a *testing.T (any testing.TB), so they sit beside
// testify's: like assert they report and return the verdict, and
// TestFetchAllKeepsTheLimit in example_testify_test.go shows a test that
// uses require for its setup and AssertCompliant for the limits.
package rlchecktest

// Package redistest starts real Redis servers for tests: a single
// redis-server, or a 3-master Redis Cluster, each on loopback ports in a
// temporary directory, without persistence, stopped when the test ends.
//
// When redis-server is not installed the tests that need it skip with a
// message, unless RLCHECK_REQUIRE_REDIS=1 (as CI sets it) makes that a
// failure, so a missing install cannot pass for a green run.
package redistest

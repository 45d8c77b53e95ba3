// Package redislimit is the fleet-wide strategy: every rule's check and the
// record in all of them run as one atomic Lua script in Redis, so processes
// that share a key can never admit past a limit between them.
//
// A limiter's exact rules share one sorted set of integer-microsecond
// scores, one unique member per admitted call; a bucketed rule
// (10000/day:b64, or any limit above rule.ExactUpTo unless Options.Exact
// is set) keeps its running totals in the limiter's head hash, which also
// counts the calls, and its older bucket counts in a hash of its own, a
// few hundred bytes whatever the limit (docs/redis.md, Layout). All keys
// of one limiter carry the same hash tag, so the script also runs on a
// Redis Cluster. The script works unchanged on
// a single server, a ClusterClient and miniredis (anything that is a
// redis.Scripter); the in-process miniredis of simulations lives in
// package embedded, so that this one links neither it nor its Lua.
//
// Every fault ends a call with an error named for it (ErrTimeout,
// ErrSkew, ErrCorrupt, ErrStateLost, ErrMemberClash, ErrWrongType), and
// every script run has a deadline (Options.CallTimeout).
package redislimit

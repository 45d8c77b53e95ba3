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
// Reserve admits a call at estimated costs and takes a lease in the key's
// lease set; the reservation's Settle corrects every rule to the actual
// costs and frees the lease, one script run each, idempotent. Under
// Options.MaxInFlight every call takes a lease, and the cap holds for the
// whole key; a lease not freed ends after Options.LeaseTime (a process
// that died), and a reservation never settled keeps its estimate for
// good (docs/redis.md, Reservations and leases).
//
// Every fault ends a call with an error named for it (ErrTimeout,
// ErrSkew, ErrCorrupt, ErrStateLost, ErrMemberClash, ErrWrongType), and
// every script run has a deadline (Options.CallTimeout).
package redislimit

// Package catalog is the table of the strategies `rlcheck simulate`,
// `rlcheck run` and `rlcheck audit` compare, by name: the production
// limiters of package strategies and strategies/redislimit (the redis
// entries on a simulated Redis round trip when the scenario has one), and
// the audit's specimens (third-party libraries and hand-written Redis
// designs, from internal/specimens), which nobody should copy.
//
// Lookup finds a Strategy, whose New builds one worker's limiter from an
// Env; Limiters builds a run's limiters for every worker, the one setup
// both the simulator and the real-clock runner use; Validate checks a
// scenario's strategy names.
package catalog

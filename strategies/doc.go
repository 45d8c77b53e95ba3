// Package strategies holds the rate-limiting strategies rlcheck compares.
//
// Each strategy is written once against clock.Runtime: the simulator runs it
// on a virtual clock, production code on the real one. Rule bookkeeping (the
// exact sliding log, the bucketed window, the sliding-window counter, the
// fixed window) is pure: it takes now as an argument and owns no clock.
// NewBook picks a rule's bookkeeping as the rule says (rule.Rule.Keeping),
// and NewCombinedBounded checks every rule that way, in memory bounded
// whatever the limits and without ever overfilling a window. A rule of
// another kind than sliding (fixed, bucket, first-call) gets its exact
// book (FixedBook, TokenBucket, FirstCallBook) in every limiter, with the
// margin Widen gives it for the way to the provider.
//
// A call whose cost is known only from its answer (the tokens of a model's
// completion) reserves an estimate and settles it later (Reserver,
// Reservation): every limiter here does, and every book settles
// (SettleBook), as the provider counts reserved costs (docs/semantics.md,
// "Reserved costs"). Package redislimit returns the same Reservation.
//
// Every constructor takes its arguments in one order: the runtime (none for
// the NewReal forms, which use the wall clock), then any count such as the
// in-flight cap, then the rules, variadic: NewGated(rt, 4, rules...) and
// NewRealGated(4, rules...).
package strategies

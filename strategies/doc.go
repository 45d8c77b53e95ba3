// Package strategies holds the rate-limiting strategies rlcheck compares.
//
// Each strategy is written once against clock.Runtime: the simulator runs it
// on a virtual clock, production code on the real one. Rule bookkeeping (the
// sliding log, the sliding-window counter) is pure: it takes now as an
// argument and owns no clock.
package strategies

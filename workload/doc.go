// Package workload is the model of a simulation scenario: the rules, the
// strategies to compare, when callers arrive (Arrivals), the runtime's
// lateness and costs, the send path and the seed (Scenario), and the
// distributions of durations they draw from (Dist).
//
// It is the one vocabulary `rlcheck simulate` (package simulate), `rlcheck
// run` (realrun) and `rlcheck serve` (its latencies) share, and it knows
// nothing of them: the strategy catalogue checks the strategy names
// (catalog.Validate), and package scenarios reads a Scenario from YAML and
// ships the named ones. The model is not folded into scenarios because the
// reader checks strategy names, which sit above the model; and it is not
// called "scenario", one letter from the reader's name.
package workload

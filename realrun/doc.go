// Package realrun runs a scenario's strategies on the wall clock, with real
// goroutines and timers, and checks the sends that actually happened.
//
// It is the other driver of the strategy code the simulate package runs on a
// virtual clock: each strategy's limiters are built by the same catalogue
// setup (catalog.Limiters), on a clock.Real instead of the scheduler. Set
// beside the simulator's prediction (a Simulator, which the command wires
// to simulate.RunSeeds; this package does not import simulate), the
// measured violations show whether the simulator's model of timer lateness
// predicts what real timers do.
package realrun

// Package metrics defines the Prometheus series every rlcheck command
// writes (a rule's window usage against its limit, and its violations), so
// that check, simulate and the live commands name and label them alike and
// one dashboard reads them all. It also holds the computations behind them
// that need nothing but send times.
package metrics

// Package rule holds the core types every other rlcheck package shares: a rate
// rule ("N per W"), its parsing and formatting, and the window boundary mode.
//
// A rule N/W is a contract that, for every instant t, at most N sends lie in
// the half-open window [t, t+W). Times are integer nanoseconds throughout.
package rule

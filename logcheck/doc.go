// Package logcheck checks what a fleet really sent: one or more send logs,
// merged by time in a streaming k-way merge, repaired within a bounded
// reorder horizon, optionally split per key and checked against an in-flight
// cap, and judged by the checker package.
//
// It is the library behind `rlcheck check`; everything the command does can
// be called from Go: Run checks, and Write reports the results as text, JSON,
// JUnit or GitHub Actions commands (WriteMetricsFile for Prometheus).
package logcheck

// Package report is the verdict of every check-like command (check, sql,
// serve, merge) and its writing: a Result holds one verdict per key with the
// rules' totals, New builds one from the groups a command judged, and Write
// writes results as text, JSON, JUnit XML or GitHub Actions commands
// (WriteMetricsFile adds the Prometheus text format). Doc is the JSON
// document Write produces, which merge reads back.
//
// The package judges nothing: the checker package does, and the commands'
// libraries (logcheck, sqlcheck, merge) turn what they judged into a Result.
package report

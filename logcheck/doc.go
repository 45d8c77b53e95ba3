// Package logcheck checks what a fleet really sent: one or more send logs,
// merged by time in a streaming k-way merge, repaired within a bounded
// reorder horizon, optionally split per key and checked against an in-flight
// cap, and judged by the checker package.
//
// It is the library behind `rlcheck check`; everything the command does can
// be called from Go: Run checks and returns a report.Result, which
// report.Write writes as text, JSON, JUnit or GitHub Actions commands.
//
// Memory follows the rules, not the input: a send is held only while a late
// line may still precede it (sends at one instant as one entry), and
// Config.MaxBuffered bounds what is held, Config.Sort included, with an error
// naming the bound. Each late line costs O(log n).
package logcheck

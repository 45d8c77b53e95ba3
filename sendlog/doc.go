// Package sendlog reads send logs: plain text with one timestamp a line, CSV
// with a header, and JSON lines. It yields one Record per send, streaming and
// without allocating per line, and reports bad input as *InputError, naming
// the file, the line and the offending text.
//
// Timestamps are decimal seconds ("3.001236"), integer epochs in s, ms, µs or
// ns (the unit is detected from the digit count unless given), or RFC 3339
// with fractions. Numbers are parsed exactly, digit by digit, never through
// float64: a float64 cannot hold an epoch in nanoseconds.
//
// Hostile input fails fast and never reads as a shorter or shifted log: a
// gzip stream cut short, a line longer than MaxLine (even one that never
// ends), and an integer whose digit count points to another unit than the
// one detected are each an *InputError. A UTF-8 byte-order mark at the start
// is dropped in every layout.
package sendlog

// Package watch follows growing send logs, as `tail -F` does, and checks
// them continuously against the rules: each violation is reported as its
// line is read, and Prometheus metrics give each rule's current usage,
// the violations so far and the lines read. It is the library behind
// `rlcheck watch`.
//
// Files are polled (every Config.Poll, 100 ms by default), which works
// alike on every system and file system: new lines are read as they are
// completed, a file renamed away is read to its end before the new file at
// the path is followed from its start, and a file that shrinks is taken as
// truncated and read again from its start. Lines are parsed by
// sendlog.Lines, exactly as check parses them, and judged by one streaming
// checker per key; a key whose windows have all passed is dropped, so
// memory follows the keys active within the longest window.
//
// There is no reorder horizon: lines must come in time order within each
// file (and per key across files). A line earlier than the last one judged
// for its key is reported as out of order and left out, so no verdict is
// ever delayed.
package watch

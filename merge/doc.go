// Package merge adds up the JSON reports of checks on time shards of one
// log (rlcheck check --from/--to --format json) into the report of the
// whole, and refuses reports that do not add up to one log's: made by
// another rlcheck, of other rules or inputs, judging a part of the log
// twice, or leaving one out unless Options.Subset says so. It is the
// library behind `rlcheck merge`.
package merge

// Package contract reads contract files: the rate limits and in-flight cap
// an API promises, written once in YAML so that CI checks and production
// audits judge against the same terms.
//
// A contract file looks like this:
//
//	name: payments-api
//	rules: [10/s, 500/min, 10000/day]
//	max_in_flight: 4
//	boundary: half-open
//
// rules is a list of LIMIT/WINDOW rules in the syntax of rule.Parse (a
// single comma-separated string works too); max_in_flight caps the calls in
// flight at once; boundary is half-open (the default) or closed; name is
// optional. A contract needs at least one rule or a cap. Unknown fields are
// errors, so a misspelt field cannot silently loosen a check. Load reads at
// most MaxSize bytes (1 MiB): a larger file is an error, not a read without
// end.
package contract

// Package cli holds the parts of rlcheck's command line that are more than
// wiring, so that cmd/rlcheck stays thin and they can be tested alone:
// output paths prepared before any work, error output under GitHub Actions,
// the nearest shipped scenario to a mistyped name, a flag that may be left
// unset, and shell completion of flag values and scenario names.
package cli

package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// InputFormats are the values of check --input-format.
var InputFormats = []string{"auto", "plain", "csv", "jsonl", "nginx", "apache"}

// Words completes a flag from a fixed list of values.
func Words(words ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(words, cobra.ShellCompDirectiveNoFileComp)
}

// List completes a comma-separated list of words: what was typed up to
// the last comma stays, and the words not yet in the list follow it.
func List(words []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, given := "", map[string]bool{}
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done = toComplete[:i+1]
			for _, w := range strings.Split(toComplete[:i], ",") {
				given[strings.TrimSpace(w)] = true
			}
		}
		var out []string
		for _, w := range words {
			if !given[w] && strings.HasPrefix(done+w, toComplete) {
				out = append(out, done+w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// Strategies completes --strategies, a comma-separated list.
func Strategies() cobra.CompletionFunc { return List(catalog.StrategyNames()) }

// Scenario completes a command's one scenario argument: the shipped
// names, and files when no name matches.
func Scenario(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, n := range scenarios.Names() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// OneOf checks that a flag's value is one of the words it takes; the
// error names them all: --format "x": want text, json, junit or github.
func OneOf(flag, value string, words ...string) error {
	if slices.Contains(words, value) {
		return nil
	}
	want := words[len(words)-1]
	if len(words) > 1 {
		want = strings.Join(words[:len(words)-1], ", ") + " or " + want
	}
	return fmt.Errorf("%s %q: want %s", flag, value, want)
}

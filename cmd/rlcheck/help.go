package main

import (
	"embed"
	"strings"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// The long help of each command is prose, kept in help/NAME.txt.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help returns the long help of a command, with the shipped scenarios and
// the simulator's strategies filled in.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a help file missing from the embedded set is a build mistake
	}
	return strings.NewReplacer(
		"{{scenarios}}", strings.Join(scenarios.Names(), ", "),
		"{{strategies}}", strings.Join(catalog.StrategyNames(), ", "),
	).Replace(strings.TrimSuffix(string(b), "\n"))
}

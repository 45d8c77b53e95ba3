package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// scenarioOverrides are the flags simulate and run share to adjust a loaded
// scenario; an empty string or an unset seed leaves the scenario's own.
type scenarioOverrides struct {
	seed       cli.OptionalUint
	strategies string
	lateness   string
	opCost     string
}

// load reads the scenario at path (or a shipped one by name) and applies
// the overrides the user gave.
func (o *scenarioOverrides) load(cmd *cobra.Command, path string) (*scenarios.Scenario, error) {
	scn, err := scenarios.Load(path)
	if err != nil {
		return nil, cli.ScenarioError(path, err)
	}
	sc := &scn.Scenario
	if o.seed.Given {
		sc.Seed = o.seed.Value
	}
	if o.strategies != "" {
		sc.Strategies = nil
		for _, name := range strings.Split(o.strategies, ",") {
			if name = strings.TrimSpace(name); name != "" {
				sc.Strategies = append(sc.Strategies, name)
			}
		}
	}
	if o.lateness != "" {
		if sc.Lateness, err = simulate.ParseDist(o.lateness); err != nil {
			return nil, fmt.Errorf("--lateness: %v", err)
		}
	}
	if o.opCost != "" {
		if sc.OpCost, err = simulate.ParseDist(o.opCost); err != nil {
			return nil, fmt.Errorf("--op-cost: %v", err)
		}
	}
	return scn, nil
}

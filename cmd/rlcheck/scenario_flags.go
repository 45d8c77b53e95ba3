package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// scenarioOverrides are the flags simulate and run share to adjust a loaded
// scenario; an empty string or a negative seed leaves the scenario's own.
type scenarioOverrides struct {
	seed       int64
	strategies string
	lateness   string
	opCost     string
}

// load reads the scenario at path (or a shipped one by name) and applies
// the overrides the user gave.
func (o *scenarioOverrides) load(cmd *cobra.Command, path string) (*scenarios.Scenario, error) {
	scn, err := scenarios.Load(path)
	if err != nil {
		return nil, err
	}
	sc := &scn.Scenario
	if cmd.Flags().Changed("seed") {
		if o.seed < 0 {
			return nil, fmt.Errorf("--seed must not be negative")
		}
		sc.Seed = uint64(o.seed)
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

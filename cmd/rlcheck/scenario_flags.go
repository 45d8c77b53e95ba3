package main

import (
	"github.com/rlcheck/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/scenarios"
)

// scenarioOverrides are the flags simulate and run share to adjust a loaded
// scenario.
type scenarioOverrides struct {
	seed cli.OptionalUint
	scenarios.Overrides
}

// load reads the scenario at path (or a shipped one by name) and applies
// the overrides the user gave.
func (o *scenarioOverrides) load(path string) (*scenarios.Scenario, error) {
	scn, err := scenarios.Load(path)
	if err != nil {
		return nil, cli.ScenarioError(path, err)
	}
	if o.seed.Given {
		o.Seed = &o.seed.Value
	}
	return scn, o.Apply(scn)
}

package realrun

import (
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// simulator is the prediction on the simulator, as the command wires it
// (cli.Simulate, which imports this package).
func simulator(s *workload.Scenario, seeds int, o PredictOptions) ([]SeedCounts, error) {
	rr, err := simulate.RunSeeds(s, seeds, simOptions(o))
	if err != nil {
		return nil, err
	}
	out := make([]SeedCounts, len(rr.Strategies))
	for i, st := range rr.Strategies {
		out[i].Name = st.Name
		for _, r := range st.Rules {
			out[i].PerRule = append(out[i].PerRule, r.PerRun)
		}
	}
	return out, nil
}

func simOptions(o PredictOptions) simulate.Options {
	return simulate.Options{Strategies: o.Strategies, Redis: o.Redis, Progress: o.Progress}
}

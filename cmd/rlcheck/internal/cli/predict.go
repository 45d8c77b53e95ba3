package cli

import (
	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// Simulate is the real-clock runner's prediction on the simulator: each
// strategy's violations per rule and seed over seeds s.Seed ..
// s.Seed+seeds-1 (a realrun.Simulator).
func Simulate(s *workload.Scenario, seeds int, o realrun.PredictOptions) ([]realrun.SeedCounts, error) {
	rr, err := simulate.RunSeeds(s, seeds, simulate.Options{Strategies: o.Strategies, Redis: o.Redis, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	out := make([]realrun.SeedCounts, len(rr.Strategies))
	for i, st := range rr.Strategies {
		out[i].Name = st.Name
		for _, r := range st.Rules {
			out[i].PerRule = append(out[i].PerRule, r.PerRun)
		}
	}
	return out, nil
}

package scenarios

import (
	"fmt"
	"strings"

	"github.com/rlcheck/rlcheck/workload"
)

// Overrides replace parts of a loaded scenario, as simulate's and run's
// flags do; a zero field leaves the scenario's own value.
type Overrides struct {
	Seed       *uint64
	Strategies string // comma-separated strategy names
	Lateness   string // a duration or a distribution, as in a scenario file
	OpCost     string
}

// Apply changes s by o; an unparsable distribution is an error naming the
// flag it came from.
func (o Overrides) Apply(s *Scenario) error {
	sc := &s.Scenario
	if o.Seed != nil {
		sc.Seed = *o.Seed
	}
	if o.Strategies != "" {
		sc.Strategies = nil
		for name := range strings.SplitSeq(o.Strategies, ",") {
			if name = strings.TrimSpace(name); name != "" {
				sc.Strategies = append(sc.Strategies, name)
			}
		}
	}
	var err error
	if o.Lateness != "" {
		if sc.Lateness, err = workload.ParseDist(o.Lateness); err != nil {
			return fmt.Errorf("--lateness: %v", err)
		}
	}
	if o.OpCost != "" {
		if sc.OpCost, err = workload.ParseDist(o.OpCost); err != nil {
			return fmt.Errorf("--op-cost: %v", err)
		}
	}
	return nil
}

package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/workload"
)

// ScenarioFlags are the flags simulate, run and audit share to set the
// strategies and the runtime model of a scenario: the one place that
// parses --strategies, --lateness and --op-cost.
type ScenarioFlags struct {
	Seed       OptionalUint // --seed
	Strategies string       // --strategies, comma-separated
	Lateness   string       // --lateness, a duration or a distribution
	OpCost     string       // --op-cost
}

// flagOf maps a scenario field (workload.FieldError) to the flag that sets it.
var flagOf = map[string]string{
	"seed":       "--seed",
	"strategies": "--strategies",
	"strategy":   "--strategy",
	"lateness":   "--lateness",
	"op_cost":    "--op-cost",
}

// FlagError rewords a workload.FieldError in the words of the command
// line, naming the flag instead of the field; other errors pass unchanged.
func FlagError(err error) error {
	var fe *workload.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	name, ok := flagOf[fe.Field]
	if !ok {
		return err
	}
	return errors.New(fe.Format(name))
}

// StrategyNames returns the names --strategies gives, blanks dropped; nil
// when it gives none.
func (f *ScenarioFlags) StrategyNames() []string {
	var names []string
	for name := range strings.SplitSeq(f.Strategies, ",") {
		if name = strings.TrimSpace(name); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// Dists sets *lateness and *opCost from --lateness and --op-cost when
// given; an unparsable one is an error naming its flag.
func (f *ScenarioFlags) Dists(lateness, opCost *workload.Dist) error {
	for _, d := range []struct {
		field, text string
		into        *workload.Dist
	}{{"lateness", f.Lateness, lateness}, {"op_cost", f.OpCost, opCost}} {
		if d.text == "" {
			continue
		}
		v, err := workload.ParseDist(d.text)
		if err != nil {
			return FlagError(&workload.FieldError{Field: d.field, Err: err})
		}
		*d.into = v
	}
	return nil
}

// Apply changes s by the flags given; a flag not given leaves the
// scenario's own value.
func (f *ScenarioFlags) Apply(s *workload.Scenario) error {
	if f.Seed.Given {
		s.Seed = f.Seed.Value
	}
	if f.Strategies != "" {
		s.Strategies = f.StrategyNames()
	}
	return f.Dists(&s.Lateness, &s.OpCost)
}

// Load reads the scenario at path (or a shipped one by name) and applies
// the flags given.
func (f *ScenarioFlags) Load(path string) (*scenarios.Scenario, error) {
	scn, err := scenarios.Load(path)
	if err != nil {
		return nil, ScenarioError(path, err)
	}
	return scn, f.Apply(&scn.Scenario)
}

// CostlyNote says on w, before a real-clock run's prediction over seeds
// seeds, which strategies of s make it slow and which flag sets the count.
func CostlyNote(w io.Writer, s *workload.Scenario, seeds int) {
	if costly := realrun.Costly(s); len(costly) > 0 {
		fmt.Fprintf(w, "predicting over %d seeds; %s run every try on an embedded Redis of their own, which is slow (--seeds sets the count)\n",
			seeds, strings.Join(costly, ", "))
	}
}

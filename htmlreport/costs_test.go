package htmlreport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// TestSimulatePanelsInUnits: a simulation of llm-api draws each cost rule
// in tokens, at the provider and among the records, with the simulator's
// violations: sequential's overfilled tokens window is marked.
func TestSimulatePanelsInUnits(t *testing.T) {
	scn, err := scenarios.Shipped("llm-api")
	require.NoError(t, err)
	res, err := simulate.Run(&scn.Scenario, simulate.Options{Strategies: []string{"sequential", "combined"}})
	require.NoError(t, err)
	units := rule.Units(res.Rules)
	for _, st := range res.Strategies {
		pn, err := build(timeline{name: st.Name, times: st.Sends, records: st.Admissions, rules: res.Rules,
			costs: workload.UnitCosts(st.SendCosts, units), recCosts: workload.UnitCosts(st.AdmissionCosts, units),
			where: workerOf(st.SendWorkers)})
		require.NoError(t, err, st.Name)
		for i, r := range res.Rules {
			assert.Equal(t, map[bool]string{true: "sends", false: r.Unit}[r.Unit == ""], pn.Rules[i].What, "%s %s", st.Name, r)
			assert.Equal(t, st.Rules[i].Violations, pn.Rules[i].Violations, "%s %s", st.Name, r)
			assert.Equal(t, st.Rules[i].MaxInWindow, pn.Rules[i].Peak, "%s %s", st.Name, r)
		}
	}
	assert.Positive(t, res.Strategies[0].Rules[1].Violations, "sequential overfills the tokens window")
}

package main

import "github.com/rlcheck/rlcheck/simulate"

// writeMetrics writes --metrics FILE.prom, when asked, for the textfile
// collector of node_exporter.
func (o *simulateOptions) writeMetrics(res *simulate.Result) error {
	if o.metrics == "" {
		return nil
	}
	return simulate.WriteMetricsFile(o.metrics, res)
}

// firstRuns is the run on the scenario's own seed of every strategy of a
// repeated simulation: the figures metrics describe.
func firstRuns(r *simulate.RunsResult) *simulate.Result {
	res := &simulate.Result{Scenario: r.Scenario, Seed: r.Seed, Rules: r.Rules}
	for i := range r.Strategies {
		res.Strategies = append(res.Strategies, r.Strategies[i].First)
	}
	return res
}

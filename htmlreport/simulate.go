package htmlreport

import (
	"bytes"
	"fmt"

	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// Simulate writes the HTML report of a simulation to path: per strategy the
// window usage of its run on the scenario's own seed, at the provider (the
// verdict) and, when the scenario has a send path, among the limiter's own
// records as a separate layer; the violations per run across the seeds; and
// the text report. An empty path writes nothing.
func Simulate(path string, res *simulate.RunsResult) error {
	if path == "" {
		return nil
	}
	p := &page{Kind: "simulate", Title: fmt.Sprintf("rlcheck simulate %s, seed %d, %d runs", res.Scenario, res.Seed, res.Runs)}
	for _, st := range res.Strategies {
		f := &st.First
		if len(f.Sends) == 0 {
			continue
		}
		units := rule.Units(res.Rules)
		pn, err := build(timeline{name: st.Name, times: f.Sends, records: f.Admissions, rules: res.Rules,
			costs: workload.UnitCosts(f.SendCosts, units), recCosts: workload.UnitCosts(f.AdmissionCosts, units),
			color: strategyColor(st.Name), where: workerOf(f.SendWorkers)})
		if err != nil {
			return err
		}
		p.Panels = append(p.Panels, pn)
		d := distSeries{Name: st.Name, PerRun: make([]int64, res.Runs)}
		for _, r := range st.Rules {
			for run, n := range r.PerRun {
				d.PerRun[run] += n
			}
		}
		p.Dist = append(p.Dist, d)
	}
	var text bytes.Buffer
	if err := simulate.WriteRunsText(&text, res); err != nil {
		return err
	}
	return write(path, p, text.String())
}

// workerOf names a simulated send by its index and worker.
func workerOf(workers []int32) func(int64) string {
	return func(i int64) string {
		if int(i) < len(workers) {
			return fmt.Sprintf("send %d, worker %d", i+1, workers[i])
		}
		return fmt.Sprintf("send %d", i+1)
	}
}

// Run writes the HTML report of real-clock runs to path: per run and
// strategy the window usage of the measured sends, and the text report
// with the prediction beside the measurements. An empty path writes nothing.
func Run(path string, rep *realrun.Report) error {
	if path == "" {
		return nil
	}
	p := &page{Kind: "run", Title: "rlcheck run " + rep.Scenario.Name}
	for i, run := range rep.Runs {
		for _, st := range run.Strategies {
			if len(st.Sends) == 0 {
				continue
			}
			name := st.Name
			if len(rep.Runs) > 1 {
				name = fmt.Sprintf("run %d: %s", i+1, st.Name)
			}
			pn, err := build(timeline{name: name, times: st.Sends, rules: run.Rules,
				costs: workload.UnitCosts(st.SendCosts, rule.Units(run.Rules)),
				color: strategyColor(st.Name), where: workerOf(nil)})
			if err != nil {
				return err
			}
			for r, n := range st.RecordViolations {
				pn.Rules[r].RecordViolations = n
			}
			pn.Records = st.RecordViolations != nil
			p.Panels = append(p.Panels, pn)
		}
	}
	var text bytes.Buffer
	if err := realrun.WriteText(&text, rep); err != nil {
		return err
	}
	return write(path, p, text.String())
}

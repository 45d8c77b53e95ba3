package plots

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

// Simulation writes the charts of a simulation into dir: a timeline per
// strategy (its run on the scenario's own seed), the comparison of
// strategies, the distribution of violations across seeds and the waits
// per binding rule, with the extension ext (".png" or ".svg"). It returns
// the files written.
func Simulation(dir, ext string, res *simulate.RunsResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	sum := Summary{
		Title: fmt.Sprintf("scenario %s, rules %s", res.Scenario, ruleText(res)),
		Rules: res.Rules,
	}
	for _, st := range res.Strategies {
		first := st.First
		path := filepath.Join(dir, "timeline-"+st.Name+ext)
		if err := Timeline(path, TimelineInput{
			Title:    fmt.Sprintf("%s on scenario %s, seed %d", st.Name, res.Scenario, res.Seed),
			Times:    first.Sends,
			Costs:    workload.UnitCosts(first.SendCosts, rule.Units(res.Rules)),
			Rules:    res.Rules,
			Strategy: st.Name,
		}); err != nil {
			return written, err
		}
		written = append(written, path)
		sr := StrategyResult{Name: st.Name, Duration: first.Duration}
		for _, r := range first.Rules {
			sr.Violations = append(sr.Violations, r.Violations)
			sr.Waited = append(sr.Waited, r.Waited)
		}
		for run := range res.Runs {
			var total int64
			for _, r := range st.Rules {
				total += r.PerRun[run]
			}
			sr.RunViolations = append(sr.RunViolations, total)
		}
		sum.Strategies = append(sum.Strategies, sr)
	}
	for _, c := range []struct {
		name string
		draw func(string, Summary) error
	}{{"comparison", Comparison}, {"distribution", Distribution}, {"waits", Waits}} {
		path := filepath.Join(dir, c.name+ext)
		s := sum
		if c.name == "distribution" {
			s.Title = fmt.Sprintf("%s, %d runs on seeds %d to %d", sum.Title, res.Runs, res.Seed, res.Seed+uint64(res.Runs)-1)
		}
		if err := c.draw(path, s); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

func ruleText(res *simulate.RunsResult) string {
	var parts []string
	for _, r := range res.Rules {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ", ")
}

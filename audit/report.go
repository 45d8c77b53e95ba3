package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/libs"
)

// WriteText writes the audit as two tables: each strategy as configured,
// workload by workload, then the suggested safe settings.
func WriteText(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "audit of %s (%s windows), seeds %d..%d, lateness %v, op cost %v\n\n",
		ruleList(r.Rules), boundaryName(r.Boundary), r.Seed, r.Seed+uint64(r.Seeds)-1, r.Lateness, r.OpCost)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\tsetting\tworkload\truns violating\tviolations\tmax in window / limit")
	for _, sa := range r.Strategies {
		for i, o := range sa.Outcomes {
			name, set := "", ""
			if i == 0 {
				name, set = sa.Name, Setting(sa.Name, sa.Config)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\n", name, set, o.Workload, o.RunsWithViolations, o.Runs,
				violations(o), windows(o.Rules))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	searched := false
	for _, sa := range r.Strategies {
		searched = searched || sa.Tried > 0
	}
	if searched {
		fmt.Fprintf(w, "\nsuggested safe settings (0 violations on every workload, seeds %d..%d):\n\n", r.Seed, r.Seed+uint64(r.Verify)-1)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "strategy\tsetting\ttried\tmax in window / limit\trate kept\tGo")
		for _, sa := range r.Strategies {
			if sa.Safe == nil {
				why := NoSetting(sa.Name)
				if why == "" {
					why = "no margin tried was enough"
				}
				fmt.Fprintf(tw, "%s\tnone found\t%d\t\t\t%s\n", sa.Name, sa.Tried, why)
				continue
			}
			worst := make([]RuleOutcome, len(r.Rules))
			for _, o := range sa.SafeOutcomes {
				for k, ro := range o.Rules {
					worst[k].Rule = ro.Rule
					worst[k].MaxInWindow = max(worst[k].MaxInWindow, ro.MaxInWindow)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.1f%%\t%s\n", sa.Name, Setting(sa.Name, *sa.Safe), sa.Tried, windows(worst),
				100*Kept(*sa.Safe, r.Rules), Code(sa.Name, *sa.Safe, r.Rules))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Worst) > 0 {
		fmt.Fprintf(w, "\nworst schedules found (seed %d), each a scenario for rlcheck simulate:\n\n", r.Seed)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "strategy\tsetting\ttried\tcalls\tmax in window / limit\tscenario")
		for _, wo := range r.Worst {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", wo.Strategy, Setting(wo.Strategy, wo.Config), wo.Tried, len(wo.Times), windows(wo.Rules), wo.File)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\nworkloads: "+workloadDocs(r.Workloads)+"\nviolations are counted by the checker, per rule, summed over the seeds")
	return err
}

func violations(o Outcome) string {
	s := make([]string, len(o.Rules))
	for i, r := range o.Rules {
		s[i] = strconv.FormatInt(r.Violations, 10)
	}
	return strings.Join(s, ", ")
}

func windows(rs []RuleOutcome) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprintf("%d/%d", r.MaxInWindow, r.Rule.Limit)
	}
	return strings.Join(s, ", ")
}

func workloadDocs(wls []Workload) string {
	s := make([]string, len(wls))
	for i, wl := range wls {
		s[i] = wl.Name + " (" + wl.Doc + ")"
	}
	return strings.Join(s, "; ")
}

func ruleList(rules []rule.Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

func boundaryName(b rule.Boundary) string {
	if b == rule.Closed {
		return "closed"
	}
	return "half-open"
}

type jsonReport struct {
	buildinfo.Header
	Rules      []string       `json:"rules"`
	Boundary   string         `json:"boundary"`
	Seed       uint64         `json:"seed"`
	Seeds      int            `json:"seeds"`
	Verify     int            `json:"verify_seeds"`
	Lateness   string         `json:"lateness"`
	OpCost     string         `json:"op_cost"`
	Strategies []jsonStrategy `json:"strategies"`
}

type jsonStrategy struct {
	Name     string        `json:"name"`
	Setting  jsonSetting   `json:"setting"`
	Outcomes []jsonOutcome `json:"workloads"`
	Tried    int           `json:"tried,omitempty"`
	Safe     *jsonSafe     `json:"safe,omitempty"`
}

type jsonSetting struct {
	Burst    int    `json:"burst,omitempty"`
	Half     bool   `json:"half,omitempty"`
	Slack    int    `json:"slack"`
	MarginNs int64  `json:"margin_ns"`
	Go       string `json:"go"`
}

type jsonSafe struct {
	Setting  jsonSetting   `json:"setting"`
	Outcomes []jsonOutcome `json:"workloads"`
}

type jsonOutcome struct {
	Workload           string     `json:"workload"`
	Runs               int        `json:"runs"`
	RunsWithViolations int        `json:"runs_with_violations"`
	Sends              int        `json:"sends_mean"`
	Rules              []jsonRule `json:"rules"`
}

type jsonRule struct {
	Rule        string `json:"rule"`
	Violations  int64  `json:"violations"`
	MaxInWindow int64  `json:"max_in_window"`
	Limit       int    `json:"limit"`
}

// WriteJSON writes the audit as one JSON document (docs/json.md).
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{Header: buildinfo.NewHeader(), Boundary: boundaryName(r.Boundary), Seed: r.Seed, Seeds: r.Seeds, Verify: r.Verify,
		Lateness: r.Lateness.String(), OpCost: r.OpCost.String(), Strategies: []jsonStrategy{}}
	for _, ru := range r.Rules {
		out.Rules = append(out.Rules, ru.String())
	}
	for _, sa := range r.Strategies {
		js := jsonStrategy{Name: sa.Name, Setting: setting(sa.Name, sa.Config, r.Rules), Outcomes: outcomes(sa.Outcomes), Tried: sa.Tried}
		if sa.Safe != nil {
			js.Safe = &jsonSafe{Setting: setting(sa.Name, *sa.Safe, r.Rules), Outcomes: outcomes(sa.SafeOutcomes)}
		}
		out.Strategies = append(out.Strategies, js)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func setting(name string, c libs.Config, rules []rule.Rule) jsonSetting {
	return jsonSetting{Burst: c.Burst, Half: c.Half, Slack: c.Slack, MarginNs: int64(c.Margin), Go: Code(name, c, rules)}
}

func outcomes(os []Outcome) []jsonOutcome {
	out := make([]jsonOutcome, len(os))
	for i, o := range os {
		jo := jsonOutcome{Workload: o.Workload, Runs: o.Runs, RunsWithViolations: o.RunsWithViolations, Sends: o.Sends}
		for _, r := range o.Rules {
			jo.Rules = append(jo.Rules, jsonRule{Rule: r.Rule.String(), Violations: r.Violations, MaxInWindow: r.MaxInWindow, Limit: r.Rule.Limit})
		}
		out[i] = jo
	}
	return out
}

// Write writes the report as text, or as JSON when format is "json".
func Write(w io.Writer, r *Report, format string) error {
	if format == "json" {
		return WriteJSON(w, r)
	}
	return WriteText(w, r)
}

package simulate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/rule"
)

// WriteLog writes sends as a plain send log, one decimal-seconds timestamp
// a line with exactly nine fractional digits ("7.005153000"), the form
// `rlcheck check` reads back without loss.
func WriteLog(w io.Writer, sends []int64) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 32)
	for _, t := range sends {
		buf = appendSeconds(buf[:0], t)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteLogOf writes strategy name's sends as WriteLog does, or, when the
// rules meter costs, as CSV with a header: ts, then one column per unit
// (Units), each send's costs in them, which check reads back with the
// costs.
func (r *Result) WriteLogOf(w io.Writer, name string) error {
	units := unitsOf(r.Rules)
	if len(units) == 0 {
		return WriteLog(w, r.SendsOf(name))
	}
	var st *StrategyResult
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			st = &r.Strategies[i]
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString("ts," + strings.Join(units, ",") + "\n")
	if st == nil {
		return bw.Flush()
	}
	buf := make([]byte, 0, 64)
	for i, t := range st.Sends {
		buf = appendSeconds(buf[:0], t)
		for _, c := range st.SendCosts[i*len(units) : (i+1)*len(units)] {
			buf = strconv.AppendInt(append(buf, ','), c, 10)
		}
		if _, err := bw.Write(append(buf, '\n')); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// unitsOf names the units rules meter, in the order they first name them.
func unitsOf(rules []rule.Rule) []string {
	var units []string
	for _, r := range rules {
		if r.Unit != "" && !slices.Contains(units, r.Unit) {
			units = append(units, r.Unit)
		}
	}
	return units
}

func appendSeconds(b []byte, t int64) []byte {
	if t < 0 {
		b = append(b, '-')
		t = -t
	}
	b = strconv.AppendInt(b, t/1e9, 10)
	b = append(b, '.')
	frac := t % 1e9
	for d := int64(1e8); d > 0; d /= 10 {
		b = append(b, byte('0'+frac/d%10))
	}
	return b
}

func durationText(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + " s"
}

// WriteText writes a run as a table: strategy, sends, duration, violations
// per rule; then cancellations and leaked capacity when there are any.
func WriteText(w io.Writer, r *Result) error {
	fmt.Fprintf(w, "scenario %s, seed %d, rules %s%s\n\n", r.Scenario, r.Seed, ruleList(r.Rules), marginText(r.Margin))
	records := r.ShowRecords()
	var t table
	head := []string{"strategy", "sends", "duration"}
	for _, ru := range r.Rules {
		head = append(head, ru.String())
	}
	if records {
		for _, ru := range r.Rules {
			head = append(head, "records "+ru.String())
		}
	}
	t.add(head...)
	for i := range r.Strategies {
		st := &r.Strategies[i]
		row := []string{st.Name, strconv.Itoa(len(st.Sends)), durationText(st.Duration)}
		for _, rr := range st.Rules {
			row = append(row, strconv.FormatInt(rr.Violations, 10))
		}
		if records {
			for _, rr := range st.Rules {
				row = append(row, strconv.FormatInt(rr.RecordViolations, 10))
			}
		}
		t.add(row...)
	}
	if err := t.write(w); err != nil {
		return err
	}
	writeLeaks(w, r.Rules, r.Strategies)
	writeUsage(w, r.Strategies)
	return writeFooter(w, records)
}

// marginText names the limiters' margin in a report's first line.
func marginText(m time.Duration) string {
	if m == 0 {
		return ""
	}
	return fmt.Sprintf("; limiters enforce every window %v wider", m)
}

func writeFooter(w io.Writer, records bool) error {
	if !records {
		_, err := fmt.Fprintln(w, "\nviolations per rule are counted by the checker (sends that overfill a window)")
		return err
	}
	_, err := fmt.Fprintln(w, "\nviolations per rule are counted by the checker: at the provider, on the instants the requests\n"+
		"arrive (the verdict), and under \"records\", on the instants the limiter admitted them")
	return err
}

func writeLeaks(w io.Writer, rules []rule.Rule, sts []StrategyResult) {
	show := false
	for i := range sts {
		if sts[i].Cancelled > 0 || maxLeak(&sts[i]) > 0 {
			show = true
		}
	}
	if !show {
		return
	}
	fmt.Fprintln(w, "\ncallers that gave up, and capacity leaked per rule (records with no send):")
	var t table
	head := []string{"strategy", "cancelled"}
	for _, ru := range rules {
		head = append(head, ru.String())
	}
	t.add(head...)
	for i := range sts {
		st := &sts[i]
		row := []string{st.Name, strconv.Itoa(st.Cancelled)}
		for _, rr := range st.Rules {
			if rr.Leaked < 0 {
				row = append(row, "-")
			} else {
				row = append(row, strconv.FormatInt(rr.Leaked, 10))
			}
		}
		t.add(row...)
	}
	_ = t.write(w)
}

func maxLeak(st *StrategyResult) int64 {
	var m int64
	for _, rr := range st.Rules {
		m = max(m, rr.Leaked)
	}
	return m
}

func ruleList(rules []rule.Rule) string {
	s := make([]string, len(rules))
	for i, r := range rules {
		s[i] = r.String()
	}
	return strings.Join(s, ", ")
}

// WriteRunsText writes runs over seeds: per strategy the share of runs with
// any violation, and per rule the mean, p50, p95 and max violations.
func WriteRunsText(w io.Writer, r *RunsResult) error {
	fmt.Fprintf(w, "scenario %s, %d runs on seeds %d to %d, rules %s%s\n\n",
		r.Scenario, r.Runs, r.Seed, r.Seed+uint64(r.Runs)-1, ruleList(r.Rules), marginText(r.Margin))
	records := r.ShowRecords()
	var t table
	head := []string{"strategy", "runs with violations", "rule", "mean", "p50", "p95", "max"}
	if records {
		head = slices.Insert(head, 2, "in records")
	}
	t.add(head...)
	for _, st := range r.Strategies {
		for k, rr := range st.Rules {
			name, share, own := "", "", ""
			if k == 0 {
				name = st.Name
				share = shareText(st.RunsWithViolations, r.Runs)
				own = shareText(st.RunsWithRecordViolations, r.Runs)
			}
			row := []string{name, share, rr.Rule.String(), strconv.FormatFloat(rr.Mean, 'f', 2, 64),
				strconv.FormatInt(rr.P50, 10), strconv.FormatInt(rr.P95, 10), strconv.FormatInt(rr.Max, 10)}
			if records {
				row = slices.Insert(row, 2, own)
			}
			t.add(row...)
		}
	}
	if err := t.write(w); err != nil {
		return err
	}
	return writeFooter(w, records)
}

func shareText(n, of int) string {
	return fmt.Sprintf("%d/%d (%.1f%%)", n, of, 100*float64(n)/float64(of))
}

// The JSON shape; fields beyond the documented ones appear only when they
// say something (omitempty).
type jsonReport struct {
	buildinfo.Header
	Scenario   string         `json:"scenario"`
	Seed       uint64         `json:"seed"`
	Runs       int            `json:"runs,omitempty"`
	MarginNs   int64          `json:"margin_ns,omitempty"`
	Strategies []jsonStrategy `json:"strategies"`
}

type jsonStrategy struct {
	Name               string  `json:"name"`
	Sends              int     `json:"sends"`
	DurationNs         int64   `json:"duration_ns"`
	DurationSeconds    float64 `json:"duration_seconds"`
	Cancelled          int     `json:"cancelled,omitempty"`
	Refused            int     `json:"refused,omitempty"`
	Runs               int     `json:"runs,omitempty"`
	RunsWithViolations *int    `json:"runs_with_violations,omitempty"`
	// RunsWithRecordViolations counts runs with a violation among the
	// limiter's admissions; shown with a send path, as record_violations.
	RunsWithRecordViolations *int       `json:"runs_with_record_violations,omitempty"`
	Rules                    []jsonRule `json:"rules"`
	Binding                  string     `json:"binding,omitempty"`
	BindingRule              string     `json:"binding_rule,omitempty"`
}

type jsonRule struct {
	Rule       string `json:"rule"`
	Limit      int    `json:"limit"`
	Window     string `json:"window"`
	Unit       string `json:"unit,omitempty"`
	Kind       string `json:"kind,omitempty"` // absent for sliding rules
	Violations int64  `json:"violations"`
	// RecordViolations are among the limiter's admissions, beside the
	// violations at the provider.
	RecordViolations *int64   `json:"record_violations,omitempty"`
	Leaked           int64    `json:"leaked,omitempty"`
	ViolationsMean   *float64 `json:"violations_mean,omitempty"`
	ViolationsP50    *int64   `json:"violations_p50,omitempty"`
	ViolationsP95    *int64   `json:"violations_p95,omitempty"`
	ViolationsMax    *int64   `json:"violations_max,omitempty"`
	*jsonUsage
}

func jsonOf(st *StrategyResult, records bool) jsonStrategy {
	js := jsonStrategy{
		Name:            st.Name,
		Sends:           len(st.Sends),
		DurationNs:      int64(st.Duration),
		DurationSeconds: st.Duration.Seconds(),
		Cancelled:       st.Cancelled,
		Refused:         st.Refused,
	}
	for _, rr := range st.Rules {
		jr := jsonRule{
			Rule:       rr.Rule.Contract().String(),
			Limit:      rr.Rule.Limit,
			Window:     rule.FormatWindow(rr.Rule.Window),
			Unit:       rr.Rule.Unit,
			Kind:       kindName(rr.Rule),
			Violations: rr.Violations,
			Leaked:     max(rr.Leaked, 0),
		}
		if records {
			jr.RecordViolations = ptr(rr.RecordViolations)
		}
		js.Rules = append(js.Rules, jr)
	}
	addUsage(&js, st)
	return js
}

// kindName is a rule's kind for JSON, "" for a sliding rule.
func kindName(r rule.Rule) string {
	if r.Kind == rule.Sliding {
		return ""
	}
	return r.Kind.String()
}

// WriteJSON writes a run as {"schema_version", "version", "scenario", "seed",
// "strategies": [{"name", "sends", "duration_ns", "rules": [{"limit",
// "window", "violations"}]}]} (docs/json.md).
func WriteJSON(w io.Writer, r *Result) error {
	out := jsonReport{Header: buildinfo.NewHeader(), Scenario: r.Scenario, Seed: r.Seed, MarginNs: int64(r.Margin), Strategies: []jsonStrategy{}}
	for i := range r.Strategies {
		out.Strategies = append(out.Strategies, jsonOf(&r.Strategies[i], r.ShowRecords()))
	}
	return encode(w, out)
}

// WriteRunsJSON writes runs over seeds: each strategy's run on the first
// seed, plus runs, runs_with_violations and per rule violations_mean,
// violations_p50, violations_p95 and violations_max.
func WriteRunsJSON(w io.Writer, r *RunsResult) error {
	out := jsonReport{Header: buildinfo.NewHeader(), Scenario: r.Scenario, Seed: r.Seed, Runs: r.Runs, MarginNs: int64(r.Margin), Strategies: []jsonStrategy{}}
	records := r.ShowRecords()
	for i := range r.Strategies {
		st := &r.Strategies[i]
		js := jsonOf(&st.First, records)
		js.Runs = r.Runs
		js.RunsWithViolations = &st.RunsWithViolations
		if records {
			js.RunsWithRecordViolations = &st.RunsWithRecordViolations
		}
		for k := range js.Rules {
			rr := &st.Rules[k]
			mean := float64(int64(rr.Mean*1000+0.5)) / 1000
			js.Rules[k].ViolationsMean = &mean
			js.Rules[k].ViolationsP50 = &rr.P50
			js.Rules[k].ViolationsP95 = &rr.P95
			js.Rules[k].ViolationsMax = &rr.Max
		}
		out.Strategies = append(out.Strategies, js)
	}
	return encode(w, out)
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteWaits writes, per strategy and rule, the time callers slept while
// that rule was the binding one, and when it first made a caller wait: the
// rule that binds first and longest is the one to negotiate.
func WriteWaits(w io.Writer, r *Result) error {
	fmt.Fprintln(w, "\ntime callers slept with each rule binding (first bound at):")
	var t table
	head := []string{"strategy"}
	for _, ru := range r.Rules {
		head = append(head, ru.String())
	}
	t.add(head...)
	for i := range r.Strategies {
		st := &r.Strategies[i]
		row := []string{st.Name}
		for _, rr := range st.Rules {
			switch {
			case rr.Records < 0:
				row = append(row, "-")
			case rr.FirstBound < 0:
				row = append(row, "never")
			default:
				row = append(row, fmt.Sprintf("%s (%s)", durationText(rr.Waited), durationText(time.Duration(rr.FirstBound))))
			}
		}
		t.add(row...)
	}
	return t.write(w)
}

// ReportOptions says what a simulation report holds.
type ReportOptions struct {
	Format string // "text" (or "") or "json"
	Waits  bool   // text: add the waits per binding rule (single runs)
	// Usage, in text: add each rule's window usage (single runs), or each
	// strategy's mean sends and duration (many runs).
	Usage bool
}

// Report writes a single run's report in the chosen format.
func Report(w io.Writer, r *Result, o ReportOptions) error {
	if o.Format == "json" {
		return WriteJSON(w, r)
	}
	if err := WriteText(w, r); err != nil {
		return err
	}
	if o.Waits {
		if err := WriteWaits(w, r); err != nil {
			return err
		}
	}
	if o.Usage {
		return WriteUsage(w, r)
	}
	return nil
}

// ReportRuns writes the report of a simulation over many seeds.
func ReportRuns(w io.Writer, r *RunsResult, o ReportOptions) error {
	if o.Format == "json" {
		return WriteRunsJSON(w, r)
	}
	if err := WriteRunsText(w, r); err != nil {
		return err
	}
	if o.Usage {
		return WriteRunsUsage(w, r)
	}
	return nil
}

// WriteRunsUsage writes each strategy's mean sends and mean time from the
// first send to the last over the runs: what a limiter's waits cost in
// throughput.
func WriteRunsUsage(w io.Writer, r *RunsResult) error {
	fmt.Fprintf(w, "\nmean over the %d runs: sends, and the time from the first send to the last:\n", r.Runs)
	var t table
	t.add("strategy", "sends", "duration")
	for _, st := range r.Strategies {
		t.add(st.Name, strconv.FormatFloat(st.MeanSends, 'f', 2, 64), durationText(st.MeanDuration))
	}
	return t.write(w)
}

// FirstRuns is the run on the scenario's own seed of every strategy: the
// figures a single run would report, and the ones metrics describe.
func (r *RunsResult) FirstRuns() *Result {
	res := &Result{Scenario: r.Scenario, Seed: r.Seed, Rules: r.Rules, SendPath: r.SendPath, Margin: r.Margin}
	for i := range r.Strategies {
		res.Strategies = append(res.Strategies, r.Strategies[i].First)
	}
	return res
}

// SendsOf returns the sends of the named strategy, or nil.
func (r *Result) SendsOf(name string) []int64 {
	for i := range r.Strategies {
		if r.Strategies[i].Name == name {
			return r.Strategies[i].Sends
		}
	}
	return nil
}

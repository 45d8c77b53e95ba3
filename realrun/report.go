package realrun

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/workload"
)

// Report sets real-clock runs of a scenario beside the virtual clock's
// prediction for it.
type Report struct {
	Scenario   *workload.Scenario // as run, after any Scale
	Speed      float64
	Margin     time.Duration // added to the limiters' windows (Options.Margin)
	Prediction *Prediction
	Runs       []*Result
}

// Broken lists, as "run N: strategy: reason", every run in which a strategy
// that must never violate did violate or went over its in-flight cap.
func (r *Report) Broken() []string {
	var out []string
	for i, run := range r.Runs {
		for _, st := range run.Strategies {
			if st.CheckAll && st.Violations() > 0 {
				why := ""
				if st.RecordViolations != nil {
					var own int64
					for _, n := range st.RecordViolations {
						own += n
					}
					why = fmt.Sprintf(" (%d among its own records", own)
					if own == 0 {
						why += ": the sends drifted from the admissions"
					}
					why += ")"
				}
				out = append(out, fmt.Sprintf("run %d: %s: %d violations%s", i+1, st.Name, st.Violations(), why))
			}
			if st.MaxSlots > 0 && st.CheckAll && st.MaxInFlight > st.MaxSlots {
				out = append(out, fmt.Sprintf("run %d: %s: %d calls in flight, cap %d", i+1, st.Name, st.MaxInFlight, st.MaxSlots))
			}
		}
	}
	return out
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64)
}

func ruleNames(r *Report) []string {
	var names []string
	for _, ru := range r.Scenario.Rules {
		names = append(names, ru.String())
	}
	return names
}

// WriteText writes each run, then measured and predicted figures side by
// side, then the timer figures the comparison rests on.
func WriteText(w io.Writer, r *Report) error {
	s := r.Scenario
	rules := ruleNames(r)
	fmt.Fprintf(w, "scenario %s on the real clock: rules %s, %d callers, speed %g, %d run(s)\n",
		s.Name, strings.Join(rules, ", "), len(s.ArrivalTimes(s.Seed)), r.Speed, len(r.Runs))
	if m := cmp.Or(r.Margin, s.Margin); m > 0 {
		fmt.Fprintf(w, "margin: the limiters enforce every window %v wider, in the prediction too; the sends are checked against the rules as written\n", m)
	}
	fmt.Fprintf(w, "prediction: virtual clock over seeds %d..%d, lateness %v, op cost %v\n",
		s.Seed, s.Seed+uint64(r.Prediction.Seeds)-1, s.Lateness, s.OpCost)
	for i, run := range r.Runs {
		if err := writeRun(w, i, len(r.Runs), run, rules); err != nil {
			return err
		}
	}
	if err := writeVersusPrediction(w, r, rules); err != nil {
		return err
	}
	writeTimers(w, r)
	if b := r.Broken(); len(b) > 0 {
		fmt.Fprintf(w, "\nstrategies that must never violate did: %s\n", strings.Join(b, "; "))
	}
	return nil
}

// writeRun writes run i of n, a row per strategy.
func writeRun(w io.Writer, i, n int, run *Result, rules []string) error {
	fmt.Fprintf(w, "\nrun %d of %d: %s wall\n", i+1, n, run.Wall.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "strategy\t%s\tin own records\tworst shortfall ms\tsent\tcancelled\tmax in flight\tfirst to last send\tsleeps\tlate p50 ms\tlate p95 ms\tlate max ms\t\n",
		strings.Join(rules, "\t"))
	for _, st := range run.Strategies {
		var cells []string
		for _, rr := range st.Rules {
			cells = append(cells, strconv.FormatInt(rr.Violations, 10))
		}
		late := SpreadOf(st.Late)
		own := "-"
		if st.RecordViolations != nil {
			var v []string
			for _, n := range st.RecordViolations {
				v = append(v, strconv.FormatInt(n, 10))
			}
			own = strings.Join(v, " ")
		}
		short := "-"
		var worst time.Duration
		for _, rr := range st.Rules {
			worst = max(worst, rr.Shortfall)
		}
		if st.Violations() > 0 {
			short = strconv.FormatFloat(float64(worst)/1e6, 'f', 3, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%d\t%s\t%s\t%s\t\n", st.Name, strings.Join(cells, "\t"), own, short,
			len(st.Sends), st.Cancelled, st.MaxInFlight, st.Duration.Round(time.Millisecond),
			late.N, ms(late.P50), ms(late.P95), ms(late.Max))
	}
	return tw.Flush()
}

// writeVersusPrediction writes each strategy's violations per rule over
// the runs beside the prediction's spread.
func writeVersusPrediction(w io.Writer, r *Report, rules []string) error {
	fmt.Fprintf(w, "\nviolations per rule, measured on the real clock beside the virtual clock's p5/p50/p95/max over %d seeds\n", r.Prediction.Seeds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\truns with violations\tpredicted share\trule\tmeasured per run\tpredicted p5 p50 p95 max\twithin p5-p95\t")
	for si, st := range r.Runs[0].Strategies {
		p := r.Prediction.lookup(st.Name)
		bad := 0
		for _, run := range r.Runs {
			if run.Strategies[si].Violations() > 0 {
				bad++
			}
		}
		for k := range st.Rules {
			var per []string
			in := 0
			for _, run := range r.Runs {
				n := run.Strategies[si].Rules[k].Violations
				per = append(per, strconv.FormatInt(n, 10))
				if p != nil && p.Rules[k].Contains(n) {
					in++
				}
			}
			name, share, predShare, pred, within := "", "", "", "-", "-"
			if k == 0 {
				name = st.Name
				share = fmt.Sprintf("%d/%d", bad, len(r.Runs))
				predShare = "-"
				if p != nil {
					predShare = fmt.Sprintf("%.0f%%", 100*float64(p.RunsWithViolations)/float64(r.Prediction.Seeds))
				}
			}
			if p != nil {
				pr := p.Rules[k]
				pred = fmt.Sprintf("%d %d %d %d", pr.P5, pr.P50, pr.P95, pr.Max)
				within = fmt.Sprintf("%d/%d", in, len(r.Runs))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, share, predShare, rules[k], strings.Join(per, " "), pred, within)
		}
	}
	return tw.Flush()
}

// writeTimers writes the timer figures over every run: lateness, the send
// delay after a window frees, and each recording strategy's gap.
func writeTimers(w io.Writer, r *Report) {
	var late, wake []time.Duration
	for _, run := range r.Runs {
		for _, st := range run.Strategies {
			late = append(late, st.Late...)
			if st.Name == "combined" {
				wake = append(wake, WakeDelays(st.Sends, r.Scenario.Rules)...)
			}
		}
	}
	ls, ws := SpreadOf(late), SpreadOf(wake)
	fmt.Fprintf(w, "\ntimer lateness (each completed sleep's overshoot, every strategy and run): %d sleeps, min %s ms, p50 %s ms, p95 %s ms, max %s ms\n",
		ls.N, ms(ls.Min), ms(ls.P50), ms(ls.P95), ms(ls.Max))
	if ws.N > 0 {
		fmt.Fprintf(w, "send delay after a window frees (combined, every run): %d sends, min %s ms, p50 %s ms, p95 %s ms, max %s ms\n",
			ws.N, ms(ws.Min), ms(ws.P50), ms(ws.P95), ms(ws.Max))
	}
	for si, st := range r.Runs[0].Strategies {
		if st.SendGap == nil {
			continue
		}
		var gap []time.Duration
		for _, run := range r.Runs {
			gap = append(gap, run.Strategies[si].SendGap...)
		}
		g := SpreadOf(gap)
		fmt.Fprintf(w, "record-to-send gap (%s, every run): %d sends, min %s ms, p50 %s ms, p95 %s ms, max %s ms\n",
			st.Name, g.N, ms(g.Min), ms(g.P50), ms(g.P95), ms(g.Max))
	}
}

// WriteJSON writes the report as one JSON document (docs/json.md).
func WriteJSON(w io.Writer, r *Report) error {
	type jsonRule struct {
		Rule        string `json:"rule"`
		Violations  int64  `json:"violations"`
		MaxInWindow int64  `json:"max_in_window"`
		ShortfallNs int64  `json:"worst_shortfall_ns,omitempty"`
	}
	type jsonStrategy struct {
		Name        string     `json:"name"`
		Sent        int        `json:"sent"`
		Cancelled   int        `json:"cancelled"`
		MaxInFlight int        `json:"max_in_flight"`
		DurationNs  int64      `json:"duration_ns"`
		Rules       []jsonRule `json:"rules"`
		// RecordViolations are per rule, among the limiter's own records.
		RecordViolations []int64 `json:"record_violations,omitempty"`
		Late             Spread  `json:"timer_lateness_ns"`
		SendGap          *Spread `json:"record_to_send_gap_ns,omitempty"`
	}
	type jsonRun struct {
		WallNs     int64          `json:"wall_ns"`
		Strategies []jsonStrategy `json:"strategies"`
	}
	out := struct {
		buildinfo.Header
		Scenario   string      `json:"scenario"`
		Speed      float64     `json:"speed"`
		MarginNs   int64       `json:"margin_ns,omitempty"`
		Rules      []string    `json:"rules"`
		Prediction *Prediction `json:"prediction"`
		Runs       []jsonRun   `json:"runs"`
		Broken     []string    `json:"broken,omitempty"`
	}{Header: buildinfo.NewHeader(), Scenario: r.Scenario.Name, Speed: r.Speed, MarginNs: int64(cmp.Or(r.Margin, r.Scenario.Margin)), Rules: ruleNames(r), Prediction: r.Prediction, Broken: r.Broken()}
	for _, run := range r.Runs {
		jr := jsonRun{WallNs: int64(run.Wall)}
		for _, st := range run.Strategies {
			js := jsonStrategy{Name: st.Name, Sent: len(st.Sends), Cancelled: st.Cancelled, MaxInFlight: st.MaxInFlight,
				DurationNs: int64(st.Duration), RecordViolations: st.RecordViolations, Late: SpreadOf(st.Late)}
			if st.SendGap != nil {
				g := SpreadOf(st.SendGap)
				js.SendGap = &g
			}
			for _, rr := range st.Rules {
				js.Rules = append(js.Rules, jsonRule{rr.Rule.String(), rr.Violations, rr.MaxInWindow, int64(rr.Shortfall)})
			}
			jr.Strategies = append(jr.Strategies, js)
		}
		out.Runs = append(out.Runs, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// Write writes the report as text, or as JSON when format is "json".
func Write(w io.Writer, r *Report, format string) error {
	if format == "json" {
		return WriteJSON(w, r)
	}
	return WriteText(w, r)
}

// Repeat predicts s over seeds seeds on the virtual clock (sim), then runs
// it repeat times on the real clock (run i with opt.Run = i), naming each
// run on progress as it starts, and returns the report of them all.
func Repeat(ctx context.Context, sim Simulator, s *workload.Scenario, speed float64, seeds, repeat int, opt Options, progress io.Writer) (*Report, error) {
	// One scenario and one set of options for the prediction and the runs:
	// the prediction runs the limiters the runs run, margin included.
	s = opt.Scenario(s)
	popt := opt.Prediction()
	if costly := Costly(s); len(costly) > 0 {
		// Their runs take seconds to minutes: say how far it got (the
		// command says why first).
		popt.Progress = progressOf(progress)
	}
	pred, err := predict(sim, s, seeds, popt)
	if err != nil {
		return nil, err
	}
	rep := &Report{Scenario: s, Speed: speed, Margin: opt.Margin, Prediction: pred}
	for i := range repeat {
		fmt.Fprintf(progress, "run %d of %d...\n", i+1, repeat)
		opt.Run = i
		res, err := Run(ctx, s, opt)
		if err != nil {
			return nil, err
		}
		rep.Runs = append(rep.Runs, res)
	}
	return rep, nil
}

package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// simulateOptions holds the flags of rlcheck simulate.
type simulateOptions struct {
	example       bool
	format        cli.Format
	runs          int
	overrides     cli.ScenarioFlags
	strategy      string
	logPath       string
	metrics       string
	usage         bool
	callers       int
	redis         cli.RedisFlags // where the redis strategies run
	waits         bool
	plotDir, html string
	plotFormat    string
	plotRuns      int
	margin        time.Duration // --margin; --find-margin, its resolution
	findMargin    time.Duration
	exec          string // --exec, an adapter program, and --exec-timeout
	execTimeout   time.Duration

	// Filled by complete.
	scn *scenarios.Scenario
}

func newSimulateCmd(s streams) *cobra.Command {
	o := &simulateOptions{}
	cmd := &cobra.Command{
		Use:   "simulate [flags] SCENARIO",
		Short: "Run limiter strategies over a scenario on a deterministic virtual clock",
		Long:  help("simulate"),
		Example: `  rlcheck simulate --example > my.yaml   # an annotated scenario to start from
  rlcheck simulate my.yaml
  rlcheck simulate seed --runs 1000
  rlcheck simulate seed --lateness 0
  rlcheck simulate seed --strategy sequential --log - | rlcheck check --rules 5/1s,12/3s -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 && !o.example {
				return usageError{fmt.Errorf("simulate takes one scenario, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.example {
				return cli.PrintExample(s.out, args)
			}
			if err := o.complete(cmd, args[0]); err != nil {
				return usageError{err}
			}
			return o.run(s)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.example, "example", false, "print an annotated scenario file to start from, and exit")
	o.format.Register(f, "text", "", "text", "json")
	f.IntVar(&o.runs, "runs", 0, "repeat over N seeds and report statistics")
	f.Var(&o.overrides.Seed, "seed", "seed (default: the scenario's)")
	f.StringVar(&o.overrides.Strategies, "strategies", "", "comma-separated strategies to run (default the scenario's)")
	f.StringVar(&o.strategy, "strategy", "", "strategy whose sends --log writes (default the first run)")
	f.StringVar(&o.logPath, "log", "", "write a send log to FILE, or - for standard output")
	f.BoolVar(&o.usage, "usage", false, "also show each rule's window usage (peak, mean), when it first filled and the waiting it caused; with --runs, each strategy's mean sends and duration")
	f.StringVar(&o.metrics, "metrics", "", "write usage, wait and violation figures to FILE.prom (Prometheus text format)")
	f.StringVar(&o.overrides.Lateness, "lateness", "", "timer lateness: a duration or a distribution (overrides the scenario)")
	f.StringVar(&o.overrides.OpCost, "op-cost", "", "cost of each caller step: a duration or a distribution (overrides the scenario)")
	f.BoolVar(&o.waits, "waits", false, "also show, per rule, the time callers slept with it binding and when it first bound")
	f.IntVar(&o.callers, "callers", 0, "number of callers (overrides the scenario; not for replay)")
	f.StringVar(&o.plotDir, "plot", "", "write charts into DIR: a window-usage timeline per strategy, the comparison, the distribution across seeds, the waits")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report to FILE: each strategy's zoomable timeline, the comparison, the distribution across seeds (docs/html.md)")
	f.StringVar(&o.plotFormat, "plot-format", "png", "chart format: png or svg")
	f.IntVar(&o.plotRuns, "plot-runs", 1000, "seeds for the distribution chart when --runs is not given")
	o.redis.Register(f)
	cmd.ValidArgsFunction = cli.Scenario
	cmd.RegisterFlagCompletionFunc("strategies", cli.Strategies())
	cmd.RegisterFlagCompletionFunc("plot-format", cli.Words("png", "svg"))
	f.DurationVar(&o.margin, "margin", 0, "widen every window the limiters enforce by this much (default the scenario's); the checker keeps the rules as written")
	f.DurationVar(&o.findMargin, "find-margin", 0, "find, per strategy, the smallest margin at which no run violates at the provider (--runs, default 1000), to this resolution")
	f.Lookup("find-margin").NoOptDefVal = "100us"
	f.StringVar(&o.exec, "exec", "", "also run the strategies of this adapter program, a shell command speaking the adapter protocol (docs/adapters.md)")
	f.DurationVar(&o.execTimeout, "exec-timeout", adapter.DefaultTimeout, "kill an --exec program that takes longer than this over one run's answer")
	return cmd
}

func (o *simulateOptions) complete(cmd *cobra.Command, path string) error {
	if _, err := o.format.Resolve(); err != nil {
		return err
	}
	if o.runs < 0 {
		return fmt.Errorf("--runs %d: want 0 (one run) or more", o.runs)
	}
	if o.plotRuns < 1 {
		return fmt.Errorf("--plot-runs %d: want 1 or more", o.plotRuns)
	}
	if err := cli.OneOf("--plot-format", o.plotFormat, "png", "svg"); err != nil {
		return err
	}
	scn, err := o.overrides.Load(path)
	if err != nil {
		return err
	}
	sc := &scn.Scenario
	sc.Margin = cmp.Or(o.margin, sc.Margin)
	if o.callers != 0 {
		if o.callers < 0 || sc.Arrivals.Kind == workload.Replay {
			return fmt.Errorf("--callers: want a positive number, and a scenario that does not replay a log")
		}
		sc.Callers = o.callers
	}
	if err := catalog.Validate(sc); err != nil {
		return err
	}
	if err := cli.ChartKinds(sc.Rules, o.metrics != "", "--metrics"); err != nil {
		return err
	}
	if o.strategy, err = cli.PickStrategy(sc, o.strategy, o.exec != ""); err != nil {
		return cli.FlagError(err)
	}
	o.scn = scn
	if o.logPath != "-" {
		if err := cli.PrepareFile(o.logPath); err != nil {
			return err
		}
	}
	if err := cli.PrepareFile(o.metrics, o.html); err != nil {
		return err
	}
	return cli.PrepareDir(o.plotDir)
}

func (o *simulateOptions) run(s streams) error {
	sc := &o.scn.Scenario
	opt, closeRedis, err := o.redis.Resolve(s.errOut)
	if err != nil {
		return err
	}
	defer closeRedis()
	if opt.Exec, err = cli.Exec(o.exec, o.execTimeout, s.errOut, o.strategy, sc.Strategies); err != nil {
		return err
	}
	defer opt.Exec.Close()
	report := s.out
	if o.logPath == "-" {
		report = s.errOut
	}
	ro := simulate.ReportOptions{Format: o.format.String(), Waits: o.waits, Usage: o.usage}
	if o.findMargin > 0 || o.runs > 0 {
		defer cli.GCPercent(400)()
	}
	var res *simulate.Result
	var runs *simulate.RunsResult
	if o.findMargin > 0 {
		mo := simulate.MarginOptions{Options: opt, Runs: cmp.Or(o.runs, 1000), Resolution: o.findMargin, Sweep: simulate.SweepFor(o.plotDir)}
		mr, err := simulate.ReportMargins(report, sc, mo, o.format.String())
		if err == nil && o.plotDir != "" {
			err = plots.MarginsFile(o.plotDir, "."+o.plotFormat, mr, s.errOut)
		}
		return err
	}
	if o.runs > 0 {
		if runs, err = simulate.RunSeeds(sc, o.runs, opt); err != nil {
			return err
		}
		if err := simulate.ReportRuns(report, runs, ro); err != nil {
			return err
		}
		res = runs.FirstRuns()
	} else {
		if res, err = simulate.Run(sc, opt); err != nil {
			return err
		}
		if err := simulate.Report(report, res, ro); err != nil {
			return err
		}
	}
	if o.metrics != "" {
		if err := simulate.WriteMetricsFile(o.metrics, res); err != nil {
			return err
		}
	}
	if o.plotDir+o.html != "" {
		if err := o.plot(s, opt, runs); err != nil {
			return err
		}
	}
	return cli.WriteTo(o.logPath, s.out, func(w io.Writer) error { return res.WriteLogOf(w, o.strategy) })
}

// plot writes the charts of res, the report's --runs, or of --plot-runs
// seeds run here; the files written are listed on stderr.
func (o *simulateOptions) plot(s streams, opt simulate.Options, res *simulate.RunsResult) (err error) {
	if res == nil {
		if res, err = cli.PlotSeeds(s.errOut, &o.scn.Scenario, o.plotRuns, opt); err != nil {
			return err
		}
	}
	if err := htmlreport.Simulate(o.html, res); err != nil || o.plotDir == "" {
		return err
	}
	files, err := plots.Simulation(o.plotDir, "."+o.plotFormat, res)
	for _, f := range files {
		fmt.Fprintln(s.errOut, "wrote", f)
	}
	return err
}

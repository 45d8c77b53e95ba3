package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/realrun"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// runOptions holds the flags of rlcheck run.
type runOptions struct {
	speed     float64
	repeat    int
	seeds     int
	overrides cli.ScenarioFlags // --seed, --strategies, --lateness (of the prediction)
	format    cli.Format
	wallEpoch bool
	margin    time.Duration
	calibrate string
	html      string

	// Filled by complete.
	scn *workload.Scenario
}

func newRunCmd(s streams) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] SCENARIO",
		Short: "Run a scenario's strategies on the real clock and compare with the simulator's prediction",
		Long:  help("run"),
		Example: `  rlcheck run scenarios/seed.yaml
  rlcheck run seed --repeat 10
  rlcheck run cancellation --strategies combined,sequential --speed 2`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("run takes one scenario, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd, args[0]); err != nil {
				return usageError{err}
			}
			return o.run(cmd.Context(), s)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.speed, "speed", 1, "run time this many times faster")
	f.IntVar(&o.repeat, "repeat", 1, "run the scenario N times")
	f.IntVar(&o.seeds, "seeds", realrun.DefaultSeeds, fmt.Sprintf("seeds of the virtual-clock prediction (%d when a strategy runs on an embedded Redis of its own)", realrun.CostlySeeds))
	f.Var(&o.overrides.Seed, "seed", "seed of arrivals and call durations, and the first seed of the prediction (default: the scenario's)")
	f.StringVar(&o.overrides.Strategies, "strategies", "", "comma-separated strategies to run (default the scenario's)")
	o.format.Register(f, "text", "", "text", "json")
	f.StringVar(&o.overrides.Lateness, "lateness", "", "timer lateness the prediction models: a duration or a distribution (default the scenario's)")
	f.DurationVar(&o.margin, "margin", 0, "widen every window the limiters enforce by this much (the checker keeps the rules as written)")
	f.StringVar(&o.calibrate, "calibrate", "", "write the measured lateness and send delays to FILE as a scenario fragment (samples beside it)")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report to FILE: each strategy's zoomable timeline beside the prediction (docs/html.md)")
	f.BoolVar(&o.wallEpoch, "wall-epoch", false, "give strategies Unix time, so fixed windows start at an arbitrary phase, instead of time from the run's start as the simulator does")
	cmd.ValidArgsFunction = cli.Scenario
	cmd.RegisterFlagCompletionFunc("strategies", cli.Strategies())
	return cmd
}

func (o *runOptions) complete(cmd *cobra.Command, path string) error {
	if _, err := o.format.Resolve(); err != nil {
		return err
	}
	if o.margin < 0 {
		return fmt.Errorf("--margin must not be negative")
	}
	if o.repeat < 1 || o.seeds < 1 {
		return fmt.Errorf("--repeat and --seeds must be at least 1")
	}
	if err := cli.PrepareFile(o.html); err != nil {
		return err
	}
	scn, err := o.overrides.Load(path)
	if err != nil {
		return err
	}
	sc := &scn.Scenario
	if o.scn, err = realrun.Scale(sc, o.speed); err != nil {
		return err
	}
	if !cmd.Flags().Changed("seeds") {
		o.seeds = realrun.SeedsFor(o.scn)
	}
	return catalog.Validate(o.scn)
}

func (o *runOptions) run(ctx context.Context, s streams) error {
	if ctx == nil {
		ctx = context.Background()
	}
	cli.CostlyNote(s.errOut, o.scn, o.seeds)
	rep, err := realrun.Repeat(ctx, cli.Simulate, o.scn, o.speed, o.seeds, o.repeat, realrun.Options{WallEpoch: o.wallEpoch, Margin: o.margin}, s.errOut)
	if err != nil {
		return err
	}
	if err := realrun.Write(s.out, rep, o.format.String()); err != nil {
		return err
	}
	if err := htmlreport.Run(o.html, rep); err != nil {
		return err
	}
	if err := realrun.WriteCalibration(o.calibrate, rep); err != nil {
		return err
	}
	if len(rep.Broken()) > 0 {
		return errViolations
	}
	return nil
}

package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/audit"
	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/internal/specimens/libs"
)

// auditOptions holds the flags of rlcheck audit.
type auditOptions struct {
	rules    cli.RuleFlags // --rules, --rule, --contract, --boundary
	format   cli.Format
	burst    int
	unitBst  int
	slack    int
	margin   time.Duration
	seed     uint64
	seeds    int
	verify   int
	scenario cli.ScenarioFlags // --strategies, --lateness, --op-cost
	noSearch bool
	search   string
	kinds    bool
	exec     string // --exec, an adapter program, and --exec-timeout
	execTime time.Duration

	opt audit.Options // filled by complete
}

func newAuditCmd(s streams) *cobra.Command {
	o := &auditOptions{rules: cli.RuleFlags{Warn: s.errOut}}
	cmd := &cobra.Command{
		Use:   "audit --rules LIST [flags]",
		Short: "Measure what the Go and Redis rate limiters fleets run let through, and suggest a safe setting",
		Long:  help("audit"),
		Example: `  rlcheck audit --rules 5/1s,12/3s
  rlcheck audit --rules 10/s,500/min --format json
  rlcheck audit --rules 5/1s --burst 1 --lateness 0 --no-search
  rlcheck audit --rules "5/1s fixed" --no-search
  rlcheck audit --rules 5/1s,12/3s --provider-kinds --no-search
  rlcheck audit --rules "500/1m, 90000 tokens/1m"
  rlcheck audit --rules 5/1s,12/3s --exec 'node adapters/node/limiters.mjs'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(s); err != nil {
				return usageError{err}
			}
			return o.run(s)
		},
	}
	f := cmd.Flags()
	o.rules.Add(f)
	o.format.Register(f, "text", "", "text", "json")
	f.StringVar(&o.scenario.Strategies, "strategies", "", "comma-separated library strategies (default all; none beside --exec)")
	f.IntVar(&o.burst, "burst", 0, "x/time/rate burst for every limiter (0: each rule's limit)")
	f.IntVar(&o.unitBst, "unit-burst", 0, "burst in units for every limiter of a cost rule (0: each rule's limit)")
	f.IntVar(&o.slack, "slack", libs.UberDefaultSlack, "go.uber.org/ratelimit slack")
	f.DurationVar(&o.margin, "margin", 0, "added to every window before it becomes a rate")
	f.Uint64Var(&o.seed, "seed", 1, "first seed")
	f.IntVar(&o.seeds, "seeds", 3, "seeds per workload")
	f.IntVar(&o.verify, "verify", 10, "seeds that confirm a suggested setting")
	f.StringVar(&o.scenario.Lateness, "lateness", "", "timer lateness: a duration or a distribution (default uniform(100us, 3ms))")
	f.StringVar(&o.scenario.OpCost, "op-cost", "", "cost of each caller step (default uniform(3us, 6us))")
	f.BoolVar(&o.noSearch, "no-search", false, "audit the given setting only")
	f.StringVar(&o.search, "search", "", "search for each strategy's worst schedule; write it to `DIR` (default .) as a scenario")
	f.Lookup("search").NoOptDefVal = "."
	f.BoolVar(&o.kinds, "provider-kinds", false, "judge the same sends against sliding, fixed (epoch-aligned) and bucket (burst N) providers of each rule's N/W")
	f.StringVar(&o.exec, "exec", "", "also audit the strategies of this adapter program, a shell command speaking the adapter protocol (docs/adapters.md)")
	f.DurationVar(&o.execTime, "exec-timeout", adapter.DefaultTimeout, "kill an --exec program that takes longer than this over one run's answer")
	cmd.RegisterFlagCompletionFunc("boundary", cli.Words("half-open", "closed"))
	return cmd
}

func (o *auditOptions) complete(s streams) error {
	c, err := o.rules.Load()
	if err == nil && len(c.Rules) == 0 {
		err = cli.ErrNoRules // a cap alone is nothing to audit
	}
	if err != nil {
		return err
	}
	if c.MaxInFlight > 0 {
		fmt.Fprintf(s.errOut, "rlcheck: audit measures the rate rules; the in-flight cap of %d is not audited\n", c.MaxInFlight)
	}
	if _, err := o.format.Resolve(); err != nil {
		return err
	}
	opt := audit.DefaultOptions(c.Rules)
	opt.Boundary = c.Boundary
	opt.Config.Burst, opt.Config.UnitBurst, opt.Config.Slack, opt.Config.Margin = o.burst, o.unitBst, o.slack, o.margin
	if err := opt.Config.Validate(); err != nil {
		return err
	}
	opt.Strategies = append(opt.Strategies, o.scenario.StrategyNames()...)
	if err := o.scenario.Dists(&opt.Lateness, &opt.OpCost); err != nil {
		return err
	}
	if o.seeds < 1 || o.verify < 1 {
		return errors.New("--seeds and --verify must be at least 1")
	}
	opt.Seed, opt.Seeds, opt.Verify, opt.NoSearch, opt.SearchDir = o.seed, o.seeds, o.verify, o.noSearch, o.search
	opt.ProviderKinds = o.kinds
	o.opt = opt
	return nil
}

func (o *auditOptions) run(s streams) error {
	defer cli.GCPercent(400)()
	prog, err := cli.Exec(o.exec, o.execTime, s.errOut, "", []string{""})
	if err != nil {
		return usageError{err}
	}
	if prog != nil {
		defer prog.Close()
		o.opt.Exec = prog
	}
	rep, err := audit.Run(o.opt)
	if err != nil {
		return err
	}
	return audit.Write(s.out, rep, o.format.String())
}

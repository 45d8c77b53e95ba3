package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/internal/progress"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/report"
)

// checkOptions holds the flags of rlcheck check.
type checkOptions struct {
	rules       cli.RuleFlags
	read        cli.ReadFlags
	costs       []string
	settled     cli.SettledFlags
	format      cli.Format
	formatName  string // --format resolved
	list        int
	keys        int
	maxInFlight int
	maxDisorder time.Duration
	maxBuffered int
	sort        bool
	perFile     bool
	noProgress  bool
	summaryPath string // $GITHUB_STEP_SUMMARY, for --format github
	plot, html  string
	metrics     string
	from, to    string
	lineOffset  int64
	logStart    bool

	cfg        logcheck.Config // filled by complete
	notChecked string          // a contract's limit this input cannot check
}

func newCheckCmd(s streams) *cobra.Command {
	o := &checkOptions{rules: cli.RuleFlags{Warn: s.errOut}}
	cmd := &cobra.Command{
		Use:   "check [flags] FILE...",
		Short: "Check send logs against every rule; exit 1 when any window is overfilled",
		Long:  help("check"),
		Example: `  rlcheck check --rules 5/1s,12/3s sends.txt
  rlcheck check --rule 10/s --rule 500/min --rule 10000/day --format json sends.csv
  rlcheck check --rules 10/s --key-col tenant host1.csv.gz host2.csv.gz
  rlcheck check --rules 10/s --max-in-flight 4 --duration-col took_ms --duration-unit ms calls.csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("check needs at least one send log (or - for standard input)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd); err != nil {
				return usageError{err}
			}
			return o.run(s, args)
		},
	}
	f := cmd.Flags()
	o.rules.Add(f)
	o.read.Add(f)
	o.read.AddStatus(f)
	o.settled.Add(f)
	f.StringArrayVar(&o.costs, "cost", nil, "read a unit's cost from this CSV column or JSON field: UNIT=NAME (default: the column or field named as the unit)")
	o.format.Register(f, "", "default github under GITHUB_ACTIONS=true, else text", cli.ReportFormats...)
	f.IntVar(&o.list, "list", 0, "print the first N violations of each rule with the sends that filled the window")
	cli.RegisterKeys(f, &o.keys)
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "check at most N calls in flight at once (needs --end-col or --duration-col)")
	f.DurationVar(&o.maxDisorder, "max-disorder", 5*time.Second, "how far out of time order a line may arrive and still be put in its place")
	f.BoolVar(&o.sort, "sort", false, "sort the whole input in memory, for logs with no order at all")
	f.IntVar(&o.maxBuffered, "max-buffered", logcheck.DefaultMaxBuffered, "hold at most N sends to put late lines in place (or, with --sort, the whole input); past it, fail")
	f.StringVar(&o.metrics, "metrics", "", "write each rule's peak window usage and violations to FILE.prom (Prometheus text format)")
	f.StringVar(&o.plot, "plot", "", "draw each rule's window usage over time to FILE.png or FILE.svg (keeps the send times in memory, 8 bytes a send)")
	f.StringVar(&o.html, "html", "", "write a self-contained HTML report to FILE: zoomable timelines, the violations with their sends (docs/html.md)")
	f.StringVar(&o.from, "from", "", "judge only sends at or after this time (RFC 3339 or epoch ns); earlier lines are context (docs/sql.md)")
	f.StringVar(&o.to, "to", "", "judge only sends before this time, and stop reading there")
	f.Int64Var(&o.lineOffset, "line-offset", 0, "with --from: add N to the line numbers reported (the whole log's lines before this input)")
	f.BoolVar(&o.logStart, "log-start", false, "with --from: the input is the log from its first line, so no context before it is missing (a log shorter than its longest window can then be cut into shards)")
	f.BoolVar(&o.perFile, "per-file", false, "check each file on its own instead of merging them")
	f.BoolVar(&o.noProgress, "no-progress", false, "no progress bar (it shows only on a terminal, for inputs over 8 MB, and never under CI)")
	cmd.RegisterFlagCompletionFunc("input-format", cli.Words(cli.InputFormats...))
	cmd.RegisterFlagCompletionFunc("boundary", cli.Words("half-open", "closed"))
	return cmd
}

func (o *checkOptions) complete(cmd *cobra.Command) error {
	c, err := o.rules.Load()
	if errors.Is(err, cli.ErrNoRules) && o.maxInFlight > 0 {
		err = nil // a cap from the command line is enough
	}
	if err != nil {
		return err
	}
	rules, b, contractCap := c.Rules, c.Boundary, c.MaxInFlight
	if o.formatName, o.summaryPath, err = o.format.Report(); err != nil {
		return err
	}
	if o.list < 0 || o.keys < 0 || o.maxInFlight < 0 {
		return errors.New("--list, --keys and --max-in-flight take 0 or more")
	}
	if o.maxDisorder < 0 {
		return fmt.Errorf("--max-disorder %v: want 0 or more", o.maxDisorder)
	}
	o.read.FromContract(cmd.Flags(), c.Read)
	o.settled.FromContract(cmd.Flags(), c.Read)
	read, err := o.read.Options()
	if err == nil {
		read.Costs, err = cli.CostSources(rules, cli.ContractCosts(o.costs, c.Read))
	}
	if err == nil {
		err = o.settled.Apply(&read)
	}
	if err != nil {
		return err
	}
	if o.maxInFlight, o.notChecked, err = logcheck.InFlightCap(contractCap, o.maxInFlight, cmd.Flags().Changed("max-in-flight"), read.HasEnd()); err != nil {
		return err
	}
	if len(rules) == 0 && o.maxInFlight == 0 {
		return errors.New("nothing to check: no rules, and no in-flight cap that this input can check")
	}
	if o.plot != "" {
		if err := plots.CheckPath(o.plot); err != nil {
			return err
		}
	}
	if o.perFile && o.plot+o.html != "" {
		return errors.New("--plot and --html draw one stream: they do not go with --per-file")
	}
	if err := cli.PrepareFile(o.plot, o.html, o.metrics); err != nil {
		return err
	}
	refusals, err := o.read.Refusals()
	if err != nil {
		return err
	}
	o.cfg = logcheck.Config{
		Refusals: refusals,
		Rules:    rules, Boundary: b, List: htmlreport.CheckList(o.list, o.html), MaxInFlight: o.maxInFlight,
		Read: read, MaxDisorder: o.maxDisorder, Sort: o.sort, KeepTimes: o.plot+o.html != "", MaxBuffered: o.maxBuffered,
		ListKeys: o.keys,
	}
	if o.keys > 0 && o.plot+o.html != "" {
		o.cfg.ListKeys = max(o.keys, htmlreport.MaxPanels) // the charts' keys
	}
	o.cfg.Shard, err = cli.ParseShard(o.from, o.to, o.lineOffset, o.logStart)
	return err
}

func (o *checkOptions) run(s streams, paths []string) error {
	defer cli.GCPercent(50)()
	inputs, total, closeAll, err := logcheck.Open(paths, s.in)
	if err != nil {
		return err
	}
	defer closeAll()
	if progress.Wanted(s.errOut, o.noProgress) {
		if bar := progress.New(s.errOut, total); bar != nil {
			for i := range inputs {
				inputs[i].R = progress.Reader{R: inputs[i].R, Bar: bar}
			}
			defer bar.Finish()
		}
	}
	results, err := logcheck.RunEach(inputs, o.perFile, o.cfg)
	if err != nil {
		return cli.ShardHint(err)
	}
	for _, res := range results {
		cli.WordSkips(res.Files)
		cli.PrintChosen(s.errOut, res.Files)
		if o.notChecked != "" {
			res.NotChecked = []string{o.notChecked}
		}
	}
	if err := htmlreport.Check(o.html, results[0], o.list, o.keys); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plots.Check(o.plot, results[0], paths); err != nil {
			return err
		}
	}
	if o.metrics != "" {
		if err := report.WriteMetricsFile(o.metrics, results); err != nil {
			return err
		}
	}
	return writeReport(s, results, report.Options{
		Format: o.formatName, MaxKeys: o.keys, PerFile: o.perFile, StepSummary: o.summaryPath,
	})
}

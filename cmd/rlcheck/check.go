package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/internal/progress"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/plots"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// checkOptions holds the flags of rlcheck check.
type checkOptions struct {
	rules        []string
	ruleList     string
	boundary     string
	format       string
	inputFormat  string
	timeCol      string
	timeField    string
	keyCol       string
	keyField     string
	endCol       string
	endField     string
	durationCol  string
	durationFld  string
	durationUnit string
	unit         string
	list         int
	keys         int
	maxInFlight  int
	maxDisorder  time.Duration
	maxBuffered  int
	sort         bool
	perFile      bool
	skipInvalid  bool
	noProgress   bool
	contract     string
	paths        []string
	methods      []string
	statuses     []string
	summaryPath  string // $GITHUB_STEP_SUMMARY, for --format github
	plot         string
	metrics      string
	from, to     string
	lineOffset   int64

	cfg        logcheck.Config // filled by complete
	notChecked string          // a contract's limit this input cannot check
}

func newCheckCmd(s streams) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] FILE...",
		Short: "Check send logs against every rule; exit 1 when any window is overfilled",
		Long: `Check reads send timestamps and decides, for every rule, whether any window
held more sends than the rule allows.

A rule N/W means: for every instant t, at most N sends in [t, t+W). Send i is a
violation when N or more earlier sends lie in (t_i-W, t_i]; the count is of
such sends. --boundary closed counts both ends of the window instead.

Each FILE is plain text (one timestamp a line), CSV with a header, or JSON
lines; "-" reads standard input, and gzip input is decompressed. Several files
are merged by time and checked as one stream, since the provider sees the sum
(--per-file checks each alone). Timestamps are decimal seconds, integer epochs
(s, ms, us or ns; detected from the digit count unless --unit is given) or
RFC 3339 times. Lines may arrive out of time order by up to --max-disorder;
--sort sorts the whole input in memory instead.

Exit status: 0 when every rule holds, 1 when there are violations, 2 for bad
flags or bad input.`,
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
	f.StringArrayVar(&o.rules, "rule", nil, "a rule LIMIT/WINDOW, e.g. 5/1s (repeatable)")
	f.StringVar(&o.ruleList, "rules", "", "comma-separated rules, e.g. 10/s,500/min,10000/day")
	f.StringVar(&o.boundary, "boundary", "", "window ends that count: half-open [t, t+W) (the default) or closed [t, t+W]")
	f.StringVar(&o.format, "format", "", "output format: text, json, junit or github (default github under GITHUB_ACTIONS=true, else text)")
	f.StringVar(&o.inputFormat, "input-format", "auto", "input layout: auto, plain, csv, jsonl, nginx or apache")
	f.StringVar(&o.contract, "contract", "", "a contract file (YAML) naming the rules, the in-flight cap and the boundary")
	f.StringSliceVar(&o.paths, "path", nil, "access logs: keep requests whose path has this prefix or matches this glob (repeatable)")
	f.StringSliceVar(&o.methods, "method", nil, "access logs: keep requests with these methods (GET,POST)")
	f.StringSliceVar(&o.statuses, "status", nil, "access logs: keep requests with these statuses (200, 2xx, 429)")
	f.StringVar(&o.timeCol, "time-col", "", "CSV time column: a header name or a 1-based index (default ts, time or timestamp, else the first)")
	f.StringVar(&o.timeField, "time-field", "", "JSON-lines time field, dotted for nesting (default ts, time or timestamp)")
	f.StringVar(&o.keyCol, "key-col", "", "CSV column that splits the rules per key (tenant, API key)")
	f.StringVar(&o.keyField, "key-field", "", "JSON-lines field that splits the rules per key")
	f.StringVar(&o.endCol, "end-col", "", "CSV column with each call's end time (for --max-in-flight)")
	f.StringVar(&o.endField, "end-field", "", "JSON-lines field with each call's end time")
	f.StringVar(&o.durationCol, "duration-col", "", "CSV column with each call's duration (for --max-in-flight)")
	f.StringVar(&o.durationFld, "duration-field", "", "JSON-lines field with each call's duration")
	f.StringVar(&o.durationUnit, "duration-unit", "s", "unit of plain-number durations: s, ms, us or ns (\"150ms\" carries its own)")
	f.StringVar(&o.unit, "unit", "auto", "unit of numeric timestamps: auto, s, ms, us or ns")
	f.IntVar(&o.list, "list", 0, "print the first N violations of each rule with the sends that filled the window")
	f.IntVar(&o.keys, "keys", 20, "with a key column, how many keys the text report shows, worst first (0: all)")
	f.IntVar(&o.maxInFlight, "max-in-flight", 0, "check at most N calls in flight at once (needs --end-col or --duration-col)")
	f.DurationVar(&o.maxDisorder, "max-disorder", 5*time.Second, "how far out of time order a line may arrive and still be put in its place")
	f.BoolVar(&o.sort, "sort", false, "sort the whole input in memory, for logs with no order at all")
	f.IntVar(&o.maxBuffered, "max-buffered", logcheck.DefaultMaxBuffered, "hold at most N sends to put late lines in place (or, with --sort, the whole input); past it, fail")
	f.StringVar(&o.metrics, "metrics", "", "write each rule's peak window usage and violations to FILE.prom (Prometheus text format)")
	f.StringVar(&o.plot, "plot", "", "draw each rule's window usage over time to FILE.png or FILE.svg (keeps the send times in memory, 8 bytes a send)")
	f.StringVar(&o.from, "from", "", "judge only sends at or after this time (RFC 3339 or epoch ns); earlier lines are context (docs/sql.md)")
	f.StringVar(&o.to, "to", "", "judge only sends before this time, and stop reading there")
	f.Int64Var(&o.lineOffset, "line-offset", 0, "with --from: add N to the line numbers reported (the whole log's lines before this input)")
	f.BoolVar(&o.perFile, "per-file", false, "check each file on its own instead of merging them")
	f.BoolVar(&o.skipInvalid, "skip-invalid", false, "skip and count bad lines instead of failing")
	f.BoolVar(&o.noProgress, "no-progress", false, "no progress bar (it shows only on a terminal, for inputs over 8 MB, and never under CI)")
	cmd.RegisterFlagCompletionFunc("format", cli.Words(logcheck.Formats...))
	cmd.RegisterFlagCompletionFunc("input-format", cli.Words(cli.InputFormats...))
	cmd.RegisterFlagCompletionFunc("boundary", cli.Words("half-open", "closed"))
	return cmd
}

func (o *checkOptions) complete(cmd *cobra.Command) error {
	var rules []rule.Rule
	b := rule.HalfOpen
	contractCap := 0
	if o.contract != "" {
		c, err := contract.Load(o.contract)
		if err != nil {
			return err
		}
		rules = append(rules, c.Rules...)
		contractCap, b = c.MaxInFlight, c.Boundary
	}
	for _, r := range o.rules {
		p, err := rule.Parse(r)
		if err != nil {
			return err
		}
		rules = append(rules, p)
	}
	if o.ruleList != "" {
		ps, err := rule.ParseList(o.ruleList)
		if err != nil {
			return err
		}
		rules = append(rules, ps...)
	}
	if len(rules) == 0 && o.maxInFlight == 0 && contractCap == 0 {
		return errors.New("no rules: give --rule 5/1s (repeatable), --rules 5/1s,12/3s or --contract FILE")
	}
	if o.boundary != "" {
		var err error
		if b, err = rule.ParseBoundary(o.boundary); err != nil {
			return err
		}
	}
	if o.format == "" {
		o.format = "text"
		if os.Getenv("GITHUB_ACTIONS") == "true" {
			o.format = "github"
		}
	}
	switch o.format {
	case "text", "json", "junit":
	case "github":
		o.summaryPath = os.Getenv("GITHUB_STEP_SUMMARY")
	default:
		return fmt.Errorf("--format %q: want text, json, junit or github", o.format)
	}
	if o.list < 0 || o.keys < 0 || o.maxInFlight < 0 {
		return errors.New("--list, --keys and --max-in-flight take 0 or more")
	}
	if o.maxDisorder < 0 {
		return fmt.Errorf("--max-disorder %v: want 0 or more", o.maxDisorder)
	}
	inFmt, err := sendlog.ParseFormat(o.inputFormat)
	if err != nil {
		return err
	}
	unit, err := sendlog.ParseUnit(o.unit)
	if err != nil {
		return err
	}
	durUnit, err := sendlog.ParseUnit(o.durationUnit)
	if err != nil || durUnit == sendlog.UnitAuto {
		return fmt.Errorf("--duration-unit %q: want s, ms, us or ns", o.durationUnit)
	}
	var filter *accesslog.Filter
	if len(o.paths)+len(o.methods)+len(o.statuses) > 0 {
		if inFmt != sendlog.FormatNginx && inFmt != sendlog.FormatApache {
			return errors.New("--path, --method and --status filter access logs: give --input-format nginx or apache")
		}
		if filter, err = accesslog.NewFilter(accesslog.FilterSpec{Paths: o.paths, Methods: o.methods, Statuses: o.statuses}); err != nil {
			return err
		}
	}
	read := sendlog.Options{
		AccessFilter: filter,
		Format:       inFmt, TimeCol: o.timeCol, TimeField: o.timeField,
		KeyCol: o.keyCol, KeyField: o.keyField,
		EndCol: o.endCol, EndField: o.endField,
		DurationCol: o.durationCol, DurationField: o.durationFld, DurationUnit: durUnit,
		Unit: unit, SkipInvalid: o.skipInvalid,
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
		if o.perFile {
			return errors.New("--plot draws one chart: it does not go with --per-file")
		}
	}
	if err := cli.PrepareFile(o.plot); err != nil {
		return err
	}
	if err := cli.PrepareFile(o.metrics); err != nil {
		return err
	}
	o.cfg = logcheck.Config{
		Rules: rules, Boundary: b, List: o.list, MaxInFlight: o.maxInFlight,
		Read: read, MaxDisorder: o.maxDisorder, Sort: o.sort, KeepTimes: o.plot != "", MaxBuffered: o.maxBuffered,
	}
	if o.from != "" || o.to != "" || o.lineOffset != 0 {
		o.cfg.Shard, err = shardOf(o.from, o.to, o.lineOffset)
	}
	return err
}

func (o *checkOptions) run(s streams, paths []string) error {
	if os.Getenv("GOGC") == "" {
		// The live heap is mostly the rules' windows; collecting at 1.5×
		// rather than 2× keeps peak RSS near it (docs/benchmarks.md).
		defer debug.SetGCPercent(debug.SetGCPercent(50))
	}
	var inputs []logcheck.Input
	var total int64
	for _, p := range paths {
		if p == "-" {
			inputs = append(inputs, logcheck.Input{Name: "<stdin>", R: s.in})
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			total += st.Size()
		}
		inputs = append(inputs, logcheck.Input{Name: p, R: f})
	}
	if progress.Wanted(s.errOut, o.noProgress) {
		if bar := progress.New(s.errOut, total); bar != nil {
			for i := range inputs {
				inputs[i].R = progress.Reader{R: inputs[i].R, Bar: bar}
			}
			defer bar.Finish()
		}
	}
	groups := [][]logcheck.Input{inputs}
	if o.perFile {
		groups = nil
		for _, in := range inputs {
			groups = append(groups, []logcheck.Input{in})
		}
	}
	var results []*logcheck.Result
	for _, g := range groups {
		res, err := logcheck.Run(g, o.cfg)
		if err != nil {
			return err
		}
		if o.notChecked != "" {
			res.NotChecked = []string{o.notChecked}
		}
		results = append(results, res)
	}
	if err := logcheck.Write(s.out, results, logcheck.ReportOptions{
		Format: o.format, MaxKeys: o.keys, PerFile: o.perFile, StepSummary: o.summaryPath,
	}); err != nil {
		return err
	}
	if o.plot != "" {
		if err := plotCheck(o.plot, results[0], paths); err != nil {
			return err
		}
	}
	if o.metrics != "" {
		if err := logcheck.WriteMetricsFile(o.metrics, results); err != nil {
			return err
		}
	}
	for _, res := range results {
		if res.Violations() > 0 {
			return errViolations
		}
	}
	return nil
}

// plotCheck draws the timeline of a checked log: the whole stream, or with
// keys the worst key's.
func plotCheck(path string, res *logcheck.Result, files []string) error {
	g := res.Groups[0]
	title := strings.Join(files, ", ")
	if res.PerKey {
		title = fmt.Sprintf("key %s (the worst of %d) in %s", g.Key, len(res.Groups), title)
	}
	return plots.Timeline(path, plots.TimelineInput{
		Title: title, Times: g.Times, Rules: res.Rules, Boundary: res.Boundary,
		WallClock: res.WallClock(),
	})
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// checkOptions holds the flags of rlcheck check.
type checkOptions struct {
	rules       []string
	ruleList    string
	boundary    string
	format      string
	inputFormat string
	timeCol     string
	timeField   string
	unit        string
	list        int
	skipInvalid bool

	// Filled by complete.
	parsedRules []rule.Rule
	cfg         checker.Config
	readOpts    sendlog.Options
}

func newCheckCmd(s streams) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] FILE",
		Short: "Check a send log against every rule; exit 1 when any window is overfilled",
		Long: `Check reads send timestamps and decides, for every rule, whether any window
held more sends than the rule allows.

A rule N/W means: for every instant t, at most N sends in [t, t+W). Send i is a
violation when N or more earlier sends lie in (t_i-W, t_i]; the count is of
such sends. --boundary closed counts both ends of the window instead.

FILE is plain text (one timestamp a line), CSV with a header, or JSON lines;
"-" reads standard input. Gzip input is decompressed. Timestamps are decimal
seconds, integer epochs (s, ms, us or ns; detected from the digit count unless
--unit is given) or RFC 3339 times, and must be in time order.

Exit status: 0 when every rule holds, 1 when there are violations, 2 for bad
flags or bad input.`,
		Example: `  rlcheck check --rules 5/1s,12/3s sends.txt
  rlcheck check --rule 10/s --rule 500/min --rule 10000/day --format json sends.csv
  rlcheck check --rules 5/1s --time-field req.ts --unit ms events.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("check takes one send log (or - for standard input), got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(); err != nil {
				return usageError{err}
			}
			return o.run(s, args[0])
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.rules, "rule", nil, "a rule LIMIT/WINDOW, e.g. 5/1s (repeatable)")
	f.StringVar(&o.ruleList, "rules", "", "comma-separated rules, e.g. 10/s,500/min,10000/day")
	f.StringVar(&o.boundary, "boundary", "half-open", "window ends that count: half-open [t, t+W) or closed [t, t+W]")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.inputFormat, "input-format", "auto", "input layout: auto, plain, csv or jsonl")
	f.StringVar(&o.timeCol, "time-col", "", "CSV time column: a header name or a 1-based index (default ts, time or timestamp, else the first)")
	f.StringVar(&o.timeField, "time-field", "", "JSON-lines time field, dotted for nesting (default ts, time or timestamp)")
	f.StringVar(&o.unit, "unit", "auto", "unit of numeric timestamps: auto, s, ms, us or ns")
	f.IntVar(&o.list, "list", 0, "print the first N violations of each rule with the sends that filled the window")
	f.BoolVar(&o.skipInvalid, "skip-invalid", false, "skip and count bad lines instead of failing")
	return cmd
}

func (o *checkOptions) complete() error {
	for _, r := range o.rules {
		p, err := rule.Parse(r)
		if err != nil {
			return err
		}
		o.parsedRules = append(o.parsedRules, p)
	}
	if o.ruleList != "" {
		ps, err := rule.ParseList(o.ruleList)
		if err != nil {
			return err
		}
		o.parsedRules = append(o.parsedRules, ps...)
	}
	if len(o.parsedRules) == 0 {
		return errors.New("no rules: give --rule 5/1s (repeatable) or --rules 5/1s,12/3s")
	}
	b, err := rule.ParseBoundary(o.boundary)
	if err != nil {
		return err
	}
	if o.format != "text" && o.format != "json" {
		return fmt.Errorf("--format %q: want text or json", o.format)
	}
	if o.list < 0 {
		return fmt.Errorf("--list %d: want 0 or more", o.list)
	}
	inFmt, err := sendlog.ParseFormat(o.inputFormat)
	if err != nil {
		return err
	}
	unit, err := sendlog.ParseUnit(o.unit)
	if err != nil {
		return err
	}
	o.cfg = checker.Config{Rules: o.parsedRules, Boundary: b, List: o.list}
	o.readOpts = sendlog.Options{
		Format: inFmt, TimeCol: o.timeCol, TimeField: o.timeField,
		Unit: unit, SkipInvalid: o.skipInvalid,
	}
	return nil
}

func (o *checkOptions) run(s streams, path string) error {
	in, name := s.in, "<stdin>"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, path
	}
	res, err := checkLog(name, in, o.cfg, o.readOpts)
	if err != nil {
		return err
	}
	if o.format == "json" {
		err = writeCheckJSON(s.out, res)
	} else {
		err = writeCheckText(s.out, res)
	}
	if err != nil {
		return err
	}
	if res.Report.Violations() > 0 {
		return errViolations
	}
	return nil
}

// checkResult is a checked log with what the reader learnt about it.
type checkResult struct {
	Name     string
	Format   sendlog.Format
	Column   string
	Detected string
	Skipped  int64
	Skips    []*sendlog.InputError
	Report   checker.Report
}

// checkLog streams one log through the checker. An out-of-order send is an
// input error that names both lines.
func checkLog(name string, in io.Reader, cfg checker.Config, opts sendlog.Options) (checkResult, error) {
	rd := sendlog.NewReader(name, in, opts)
	c := checker.New(cfg)
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return checkResult{}, err
		}
		if err := c.Observe(rec.At, rec.Line); err != nil {
			var oe *checker.OrderError
			if errors.As(err, &oe) {
				return checkResult{}, &sendlog.InputError{
					File: name, Line: rec.Line,
					Msg: fmt.Sprintf("out of time order: %s is earlier than line %d (%s); sends must be in time order",
						formatInstant(oe.At.At, oe.At.At), oe.Prev.Ref, formatInstant(oe.Prev.At, oe.Prev.At)),
				}
			}
			return checkResult{}, err
		}
	}
	skipped, skips := rd.Skipped()
	return checkResult{
		Name: name, Format: rd.Format(), Column: rd.Column(), Detected: rd.Detected(),
		Skipped: skipped, Skips: skips, Report: c.Report(),
	}, nil
}

// epochFloor: timestamps from 2000-01-01 on are shown as UTC times, earlier
// ones as seconds (logs that count from their own start).
const epochFloor = 946684800 * int64(1e9)

// formatInstant shows t as a UTC time when the log holds epoch times (judged
// by its first send), else as decimal seconds with nanosecond precision.
func formatInstant(t, first int64) string {
	if first >= epochFloor {
		return unixUTC(t)
	}
	return seconds(t)
}

func seconds(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%09d s", neg, ns/1e9, ns%1e9)
}

func unixUTC(ns int64) string {
	return timeFromNanos(ns).UTC().Format("2006-01-02T15:04:05.000000000Z")
}

func ruleNames(rules []checker.RuleReport) string {
	var parts []string
	for _, r := range rules {
		if r.Violations > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", r.Rule, r.Violations))
		}
	}
	return strings.Join(parts, ", ")
}

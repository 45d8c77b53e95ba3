package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/watch"
)

func newWatchCmd(s streams) *cobra.Command {
	var rf cli.RuleFlags
	var cfg watch.Config
	var inFmt, unit, format string
	cmd := &cobra.Command{
		Use:   "watch [flags] FILE...",
		Short: "Follow growing send logs like tail -F and report each violation as it is read",
		Long: `Watch follows each FILE from its start as it grows (polling; rotation by
rename and truncation are followed), reads it as check does, and prints each
violation as its line is read. Lines must be in time order per file and key;
earlier ones are reported and left out. --listen serves Prometheus metrics.
On SIGINT or SIGTERM it prints a summary and exits 0, or 1 on violations.
See docs/watch.md.`,
		Example: `  rlcheck watch --rules 10/s,500/min --key-col tenant --listen 127.0.0.1:9100 /var/log/sends.csv`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := rf.Load()
			if err != nil {
				return usageError{err}
			}
			if len(c.Rules) == 0 {
				return usageError{errors.New("watch checks rates: give at least one rule")}
			}
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want text or json", format)}
			}
			if cfg.Read.Format, err = sendlog.ParseFormat(inFmt); err != nil {
				return usageError{err}
			}
			if cfg.Read.Unit, err = sendlog.ParseUnit(unit); err != nil {
				return usageError{err}
			}
			cfg.Rules, cfg.Boundary, cfg.Paths, cfg.JSON = c.Rules, c.Boundary, args, format == "json"
			cfg.Out, cfg.ErrOut = s.out, s.errOut
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			sum, err := watch.Run(ctx, cfg)
			if err == nil && sum.Total() > 0 {
				return errViolations
			}
			return err
		},
	}
	f := cmd.Flags()
	rf.Add(f)
	f.StringVar(&inFmt, "input-format", "auto", "input layout: auto, plain, csv, jsonl, nginx or apache")
	f.StringVar(&cfg.Read.TimeCol, "time-col", "", "CSV time column: a header name or a 1-based index")
	f.StringVar(&cfg.Read.TimeField, "time-field", "", "JSON-lines time field, dotted for nesting")
	f.StringVar(&cfg.Read.KeyCol, "key-col", "", "CSV column that splits the rules per key")
	f.StringVar(&cfg.Read.KeyField, "key-field", "", "JSON-lines field that splits the rules per key")
	f.StringVar(&unit, "unit", "auto", "unit of numeric timestamps: auto, s, ms, us or ns")
	f.StringVar(&format, "format", "text", "violations as text or json (one object a line)")
	f.DurationVar(&cfg.Poll, "poll", 0, "how often the files are looked at (default 100ms)")
	f.StringVar(&cfg.Listen, "listen", "", "serve Prometheus metrics on this address, e.g. 127.0.0.1:9100")
	f.StringVar(&cfg.MetricsPath, "metrics-path", "/metrics", "path of the metrics")
	cmd.RegisterFlagCompletionFunc("input-format", cli.Words(cli.InputFormats...))
	return cmd
}

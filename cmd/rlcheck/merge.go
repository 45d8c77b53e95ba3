package main

import (
	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/merge"
	"github.com/rlcheck/rlcheck/report"
)

func newMergeCmd(s streams) *cobra.Command {
	o := report.Options{}
	var opt merge.Options
	var format cli.Format
	cmd := &cobra.Command{
		Use:   "merge [--format F] REPORT.json...",
		Short: "Add the JSON reports of check --from/--to shards into the report of the whole log",
		Long:  help("merge"),
		Example: `  rlcheck check --to 2026-01-03T00:00:00Z --format json sends.csv > a.json
  rlcheck check --from 2026-01-03T00:00:00Z --format json sends.csv > b.json
  rlcheck merge a.json b.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, paths []string) error {
			var err error
			if o.Format, err = format.Resolve(); err != nil {
				return usageError{err}
			}
			res, err := merge.Files(paths, opt)
			if err != nil {
				return cli.ShardHint(err)
			}
			return writeReport(s, []*report.Result{res}, o)
		},
	}
	format.Register(cmd.Flags(), "text", "", cli.ReportFormats...)
	cmd.Flags().BoolVar(&opt.Subset, "subset", false, "the shards are a deliberate subset of the log: accept gaps between and around them (never overlaps)")
	cmd.Flags().IntVar(&opt.List, "list", 0, "the --list the shards were checked with: keep the first N listed violations of each rule")
	cli.RegisterKeys(cmd.Flags(), &o.MaxKeys)
	return cmd
}

// writeReport writes check results and returns errViolations when any rule was
// broken, so the command exits 1.
func writeReport(s streams, results []*report.Result, o report.Options) error {
	if err := report.Write(s.out, results, o); err != nil {
		return usageError{err}
	}
	if report.Broken(results) {
		return errViolations
	}
	return nil
}

package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/logcheck"
)

// shardOf reads check's --from, --to and --line-offset.
func shardOf(from, to string, offset int64) (*logcheck.Shard, error) {
	sh := &logcheck.Shard{HasFrom: from != "", HasTo: to != "", LineOffset: offset}
	var err error
	if sh.HasFrom {
		if sh.From, err = logcheck.ParseInstant(from); err != nil {
			return nil, err
		}
	}
	if sh.HasTo {
		if sh.To, err = logcheck.ParseInstant(to); err != nil {
			return nil, err
		}
	}
	if sh.HasFrom && sh.HasTo && sh.To <= sh.From {
		return nil, errors.New("--to must be after --from")
	}
	return sh, nil
}

func newMergeCmd(s streams) *cobra.Command {
	var format string
	var keys int
	cmd := &cobra.Command{
		Use:   "merge [--format F] REPORT.json...",
		Short: "Add the JSON reports of check --from/--to shards into the report of the whole log",
		Example: `  rlcheck check --to 2026-01-03T00:00:00Z --format json sends.csv > a.json
  rlcheck check --from 2026-01-03T00:00:00Z --format json sends.csv > b.json
  rlcheck merge a.json b.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, paths []string) error {
			var docs [][]byte
			for _, p := range paths {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				docs = append(docs, b)
			}
			res, err := logcheck.Merge(paths, docs)
			if err != nil {
				return err
			}
			if err := logcheck.Write(s.out, []*logcheck.Result{res}, logcheck.ReportOptions{Format: format, MaxKeys: keys}); err != nil {
				return usageError{err}
			}
			if res.Violations() > 0 {
				return errViolations
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, json, junit or github")
	cmd.Flags().IntVar(&keys, "keys", 20, "with keys, how many the text report shows, worst first (0: all)")
	return cmd
}

package main

import (
	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/infer"
)

func newInferCmd(s streams) *cobra.Command {
	f := cli.InferFlags{}
	cmd := &cobra.Command{
		Use:   "infer [flags] FILE",
		Short: "Learn the provider's contract from a log of calls with their statuses (2xx, 429)",
		Long:  help("infer"),
		Example: `  rlcheck infer calls.csv
  rlcheck infer --status-col code --key-col tenant --format json calls.csv`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path, log, opt, err := f.Log(args[0], s.in)
			if err != nil {
				return err
			}
			sum, err := infer.Stream(s.out, f.Format.String(), path, log, opt, f.All)
			if err == nil {
				err = f.WriteContract(path, sum)
			}
			if err == nil && (sum.Contradicted || sum.Looser) {
				err = errViolations
			}
			return err
		},
	}
	f.Add(cmd.Flags())
	cmd.RegisterFlagCompletionFunc("input-format", cli.Words("auto", "csv", "jsonl"))
	return cmd
}

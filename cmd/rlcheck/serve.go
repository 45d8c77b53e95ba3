package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/serve"
)

func newServeCmd(s streams) *cobra.Command {
	f := cli.ServeFlags{Rules: cli.RuleFlags{Warn: s.errOut}}
	cmd := &cobra.Command{
		Use:     "serve [flags]",
		Short:   "Fake a rate-limited API: judge each request at arrival, 429 past the contract, report like check",
		Long:    help("serve"),
		Example: `  rlcheck serve --contract api.yaml --duration 60s & run-my-client; wait`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config(cmd.Flags())
			if err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Out, cfg.ErrOut = s.out, s.errOut
			res, err := serve.Run(ctx, cfg)
			if err == nil && res != nil && res.Violations() > 0 {
				return errViolations
			}
			return err
		},
	}
	f.Add(cmd.Flags())
	return cmd
}

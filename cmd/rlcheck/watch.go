package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/watch"
)

func newWatchCmd(s streams) *cobra.Command {
	f := cli.WatchFlags{Rules: cli.RuleFlags{Warn: s.errOut}}
	cmd := &cobra.Command{
		Use:     "watch [flags] FILE...",
		Short:   "Follow growing send logs like tail -F and print each violation as it is read",
		Long:    help("watch"),
		Example: `  rlcheck watch --rules 10/s,500/min --key-col tenant --listen 127.0.0.1:9100 sends.csv`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config(args)
			if err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Out, cfg.ErrOut = s.out, s.errOut
			sum, err := watch.Run(ctx, cfg)
			if err == nil && sum.Total() > 0 {
				return errViolations
			}
			return err
		},
	}
	f.Add(cmd.Flags())
	cmd.RegisterFlagCompletionFunc("input-format", cli.Words(cli.InputFormats...))
	return cmd
}

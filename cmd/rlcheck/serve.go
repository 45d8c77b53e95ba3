package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/serve"
	"github.com/rlcheck/rlcheck/simulate"
)

func newServeCmd(s streams) *cobra.Command {
	var rf cli.RuleFlags
	var cfg serve.Config
	var latency, onViolation, upstream, format string
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Fake a rate-limited API: judge each request at arrival, answer 429 past the contract, report like check",
		Long: `Serve answers HTTP requests on every path as a strict provider would: each
request is judged at its arrival against the contract, optionally per key;
one within it is answered after --latency, one past it gets 429 with
Retry-After and RateLimit headers (--on-violation record answers it anyway).
Every request is logged to --log as CSV that rlcheck check reads. On SIGINT,
SIGTERM or after --duration it prints check's report on that log and exits
0, or 1 on violations. See docs/serve.md.`,
		Example: `  rlcheck serve --contract api.yaml --duration 60s & run-my-client; wait
  rlcheck serve --rules 5/1s,12/3s --key-header X-API-Key --latency "lognormal(80ms, 0.5)" --log requests.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := rf.Load()
			if err != nil {
				return usageError{err}
			}
			cfg.Rules, cfg.Boundary, cfg.Report.Format = c.Rules, c.Boundary, format
			if !cmd.Flags().Changed("max-in-flight") {
				cfg.MaxInFlight = c.MaxInFlight
			}
			if cfg.Latency, err = simulate.ParseDist(latency); err != nil {
				return usageError{err}
			}
			if onViolation != "reject" && onViolation != "record" {
				return usageError{fmt.Errorf("--on-violation %q: want reject or record", onViolation)}
			}
			cfg.Record = onViolation == "record"
			if upstream != "" {
				if cfg.Upstream, err = url.Parse(upstream); err != nil || cfg.Upstream.Host == "" {
					return usageError{fmt.Errorf("--upstream %q: want an absolute URL", upstream)}
				}
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
	f := cmd.Flags()
	rf.Add(f)
	f.StringVar(&cfg.Listen, "listen", serve.DefaultListen, "address to listen on")
	f.IntVar(&cfg.MaxInFlight, "max-in-flight", 0, "cap on requests in flight, from arrival to answer (default: the contract's)")
	f.StringVar(&cfg.KeyHeader, "key-header", "", "request header that splits the contract per key, e.g. X-API-Key")
	f.StringVar(&latency, "latency", "0", `answer latency: "80ms", "uniform(50ms, 100ms)", "exponential(80ms)" or "lognormal(80ms, 0.5)"`)
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the latency draws")
	f.IntVar(&cfg.Status, "status", 200, "status of an answer within the contract")
	f.StringVar(&cfg.Body, "body", "", "body of an answer within the contract")
	f.StringVar(&onViolation, "on-violation", "reject", "reject (429) or record (answer as usual; judge at the end)")
	f.StringVar(&cfg.LogPath, "log", "", "request log, CSV ts_ns,key,status,duration_ns (default: a temporary file)")
	f.StringVar(&cfg.MetricsPath, "metrics-path", "/metrics", "path of the Prometheus metrics, not judged")
	f.DurationVar(&cfg.Duration, "duration", 0, "stop after this long (default: at SIGINT or SIGTERM)")
	f.StringVar(&upstream, "upstream", "", "forward the requests the contract allows to this API, as a recording proxy")
	f.StringVar(&format, "format", "text", "report format: text, json, junit or github")
	f.IntVar(&cfg.Report.MaxKeys, "keys", 20, "how many keys the text report shows, worst first (0: all)")
	return cmd
}

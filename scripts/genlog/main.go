// Command genlog writes a deterministic synthetic send log as CSV
// (ts_ns,key: epoch nanoseconds and a tenant key; -tokens N adds a cost
// column), for benchmarks.
//
//	go run ./scripts/genlog -lines 10000000 > big.csv
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rlcheck/rlcheck/internal/genlog"
)

func main() {
	def := genlog.Default(10_000_000)
	cfg := def
	flag.IntVar(&cfg.Lines, "lines", def.Lines, "sends to write")
	flag.IntVar(&cfg.Keys, "keys", def.Keys, "distinct keys")
	flag.DurationVar(&cfg.MeanGap, "mean-gap", def.MeanGap, "mean gap between sends (exponential)")
	flag.Uint64Var(&cfg.Seed, "seed", def.Seed, "random seed")
	flag.Int64Var(&cfg.Start, "start", def.Start, "epoch ns the first gap starts from (default 2026-01-01T00:00:00Z)")
	flag.Int64Var(&cfg.MaxTokens, "tokens", 0, "add a tokens column, each cost uniform in 1 to N-1 (0: none)")
	flag.Parse()
	if err := genlog.WriteCSV(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
}

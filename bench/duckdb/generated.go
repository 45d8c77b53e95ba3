package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// Generated runs the query `rlcheck sql` compiles for rules on table t:
// violations, the fullest window and the first violation of every rule,
// as `rlcheck check` reports them.
func (b *Baseline) Generated(ctx context.Context, rules []rule.Rule, boundary rule.Boundary) (*logcheck.Result, error) {
	return sqlcheck.Run(ctx, b.conn, sqlcheck.Spec{Rules: rules, Boundary: boundary,
		Table: sqlcheck.Table{Name: "t", TimeCol: "ts_ns", Unit: time.Nanosecond}})
}

// compareQueries loads the log once, then runs the generated query and the
// one-query baseline rounds times each, alternating, and prints each time
// and the minimum and median of both, with the counts each found.
func compareQueries(ctx context.Context, out io.Writer, csvPath string, rules []rule.Rule, threads, rounds int) error {
	b, err := Open(ctx, threads)
	if err != nil {
		return err
	}
	defer b.Close()
	version, used, err := b.Settings(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "duckdb %s, threads %d\n", version, used)
	step := time.Now()
	rows, err := b.Load(ctx, csvPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loaded %d rows from %s in %.2f s\n", rows, csvPath, time.Since(step).Seconds())
	var gen, base []float64
	for round := range rounds {
		step = time.Now()
		res, err := b.Generated(ctx, rules, rule.HalfOpen)
		if err != nil {
			return err
		}
		gen = append(gen, time.Since(step).Seconds())
		step = time.Now()
		counts, err := b.ViolationsTogether(ctx, rules)
		if err != nil {
			return err
		}
		base = append(base, time.Since(step).Seconds())
		fmt.Fprintf(out, "round %d: generated %.2f s, baseline %.2f s\n", round+1, gen[round], base[round])
		if round == 0 {
			for i, r := range res.Groups[0].Report.Rules {
				fmt.Fprintf(out, "%s: generated %d violations (max %d in one window), baseline %d\n",
					r.Rule, r.Violations, r.MaxInWindow, counts[i])
				if r.Violations != counts[i] {
					return fmt.Errorf("rule %s: the generated query counts %d, the baseline %d", r.Rule, r.Violations, counts[i])
				}
			}
		}
	}
	fmt.Fprintf(out, "generated: min %.2f s, median %.2f s; baseline (one query): min %.2f s, median %.2f s\n",
		slices.Min(gen), median(gen), slices.Min(base), median(base))
	return nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

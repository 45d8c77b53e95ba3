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
// With countsOnly, only the violation counts.
func (b *Baseline) Generated(ctx context.Context, rules []rule.Rule, boundary rule.Boundary, countsOnly bool) (*logcheck.Result, error) {
	return sqlcheck.Run(ctx, b.conn, sqlcheck.Spec{Rules: rules, Boundary: boundary, CountsOnly: countsOnly,
		Table: sqlcheck.Table{Name: "t", TimeCol: "ts_ns", Unit: time.Nanosecond}})
}

// compareQueries loads the log once, then runs the generated query, its
// counts-only form and the one-query baseline rounds times each, in turn,
// and prints each time and the minimum and median of each, with the counts.
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
	var gen, counts, base []float64
	for round := range rounds {
		step = time.Now()
		res, err := b.Generated(ctx, rules, rule.HalfOpen, false)
		if err != nil {
			return err
		}
		gen = append(gen, time.Since(step).Seconds())
		step = time.Now()
		only, err := b.Generated(ctx, rules, rule.HalfOpen, true)
		if err != nil {
			return err
		}
		counts = append(counts, time.Since(step).Seconds())
		step = time.Now()
		want, err := b.ViolationsTogether(ctx, rules)
		if err != nil {
			return err
		}
		base = append(base, time.Since(step).Seconds())
		fmt.Fprintf(out, "round %d: generated %.2f s, generated --counts-only %.2f s, baseline %.2f s\n",
			round+1, gen[round], counts[round], base[round])
		if round > 0 {
			continue
		}
		for i, r := range res.Groups[0].Report.Rules {
			n := only.Groups[0].Report.Rules[i].Violations
			fmt.Fprintf(out, "%s: generated %d violations (max %d in one window), counts only %d, baseline %d\n",
				r.Rule, r.Violations, r.MaxInWindow, n, want[i])
			if r.Violations != want[i] || n != want[i] {
				return fmt.Errorf("rule %s: the generated queries count %d and %d, the baseline %d", r.Rule, r.Violations, n, want[i])
			}
		}
	}
	fmt.Fprintf(out, "min/median: generated %.2f/%.2f s, counts only %.2f/%.2f s, baseline (one query) %.2f/%.2f s\n",
		slices.Min(gen), median(gen), slices.Min(counts), median(counts), slices.Min(base), median(base))
	return nil
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

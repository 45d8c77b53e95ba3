package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

const defaultRules = "10/1s,500/1m,600000/24h"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0 on success, 2 on bad flags or a failed query.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	fs := flag.NewFlagSet("duckdb-baseline", flag.ContinueOnError)
	fs.SetOutput(errOut)
	csvPath := fs.String("csv", "", "CSV send log with a header and columns ts_ns,key (epoch nanoseconds)")
	rulesText := fs.String("rules", defaultRules, "comma-separated rules N/W")
	threads := fs.Int("threads", 0, "DuckDB worker threads (0 keeps DuckDB's default)")
	together := fs.Bool("one-query", false, "count every rule in one query over one shared sort, instead of one query per rule")
	compare := fs.Int("compare", 0, "run rlcheck's generated query (rlcheck sql) and the one-query baseline N times each, alternating, on the same loaded table")
	maxWindow := fs.Bool("max-window", false, "with -compare, run the generated query with --max-window too")
	queries := fs.String("sql", "", "after loading, run each ';'-separated statement of this file and print its rows and time (EXPLAIN ANALYZE ... profiles one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *csvPath == "" || fs.NArg() > 0 {
		fmt.Fprintln(errOut, "duckdb-baseline: want -csv PATH and no arguments")
		return 2
	}
	rules, err := rule.ParseList(*rulesText)
	if err != nil {
		fmt.Fprintln(errOut, "duckdb-baseline:", err)
		return 2
	}
	switch {
	case *queries != "":
		err = runFile(ctx, out, *csvPath, *queries, *threads)
	case *compare > 0:
		err = compareQueries(ctx, out, *csvPath, rules, *threads, *compare, *maxWindow)
	default:
		err = countViolations(ctx, out, *csvPath, rules, *threads, *together)
	}
	if err != nil {
		fmt.Fprintln(errOut, "duckdb-baseline:", err)
		return 2
	}
	return 0
}

// countViolations loads the log and prints one violation count per rule, with the
// time each step took, so that a slow run shows where the time went.
func countViolations(ctx context.Context, out io.Writer, csvPath string, rules []rule.Rule, threads int, together bool) error {
	start := time.Now()
	b, err := Open(ctx, threads)
	if err != nil {
		return err
	}
	defer b.Close()
	version, used, err := b.Settings(ctx)
	if err != nil {
		return err
	}
	origin := "set by -threads"
	if threads == 0 {
		origin = "DuckDB's default"
	}
	fmt.Fprintf(out, "duckdb %s, threads %d (%s)\n", version, used, origin)

	step := time.Now()
	rows, err := b.Load(ctx, csvPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loaded %d rows from %s in %.2f s\n", rows, csvPath, time.Since(step).Seconds())
	if together {
		step = time.Now()
		counts, err := b.ViolationsTogether(ctx, rules)
		if err != nil {
			return err
		}
		for i, r := range rules {
			fmt.Fprintf(out, "%s: %d violations\n", r, counts[i])
		}
		fmt.Fprintf(out, "one query for %d rules in %.2f s\n", len(rules), time.Since(step).Seconds())
		fmt.Fprintf(out, "total %.2f s\n", time.Since(start).Seconds())
		return nil
	}
	for _, r := range rules {
		step = time.Now()
		n, err := b.Violations(ctx, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d violations (%.2f s)\n", r, n, time.Since(step).Seconds())
	}
	fmt.Fprintf(out, "total %.2f s\n", time.Since(start).Seconds())
	return nil
}

// runFile loads the log into table t, then runs each statement of the file
// at path in turn, printing its rows tab-separated and the time it took.
func runFile(ctx context.Context, out io.Writer, csvPath, path string, threads int) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	b, err := Open(ctx, threads)
	if err != nil {
		return err
	}
	defer b.Close()
	step := time.Now()
	rows, err := b.Load(ctx, csvPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loaded %d rows from %s in %.2f s\n", rows, csvPath, time.Since(step).Seconds())
	for _, q := range strings.Split(string(text), ";") {
		if strings.TrimSpace(q) == "" {
			continue
		}
		step, cpu := time.Now(), cpuSeconds()
		if err := printRows(ctx, out, b, q); err != nil {
			return err
		}
		fmt.Fprintf(out, "-- %.2f s (CPU %.2f s)\n", time.Since(step).Seconds(), cpuSeconds()-cpu)
	}
	return nil
}

func printRows(ctx context.Context, out io.Writer, b *Baseline, q string) error {
	rows, err := b.conn.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		var cells []string
		for _, v := range vals {
			cells = append(cells, fmt.Sprint(v))
		}
		fmt.Fprintln(out, strings.Join(cells, "\t"))
	}
	return rows.Err()
}

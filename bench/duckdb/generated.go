package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// Generated runs the query `rlcheck sql` compiles for rules on table t:
// violations and the first violation of every rule, as `rlcheck check`
// reports them; with max, also the fullest window (--max-window); with
// countsOnly, only the violation counts.
func (b *Baseline) Generated(ctx context.Context, rules []rule.Rule, boundary rule.Boundary, countsOnly, max bool) (*report.Result, error) {
	return sqlcheck.Run(ctx, b.conn, sqlcheck.Spec{Rules: rules, Boundary: boundary, CountsOnly: countsOnly, MaxWindow: max,
		Table: sqlcheck.Table{Name: "t", TimeCol: "ts_ns", Unit: time.Nanosecond}})
}

// compareQueries loads the log once, then runs the generated query, its
// counts-only form, the one-query baseline and, with max, the generated
// query with --max-window, rounds times each, in turn, and prints each
// time and the minimum and median of each, with the counts.
func compareQueries(ctx context.Context, out io.Writer, csvPath string, rules []rule.Rule, threads, rounds int, max bool) error {
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
	type variant struct {
		name string
		run  func() ([]int64, *report.Result, error)
		secs []float64
		cpu  []float64
	}
	generated := func(countsOnly, max bool) func() ([]int64, *report.Result, error) {
		return func() ([]int64, *report.Result, error) {
			res, err := b.Generated(ctx, rules, rule.HalfOpen, countsOnly, max)
			if err != nil {
				return nil, nil, err
			}
			var n []int64
			for _, r := range res.Groups[0].Report.Rules {
				n = append(n, r.Violations)
			}
			return n, res, nil
		}
	}
	variants := []*variant{
		{name: "generated", run: generated(false, false)},
		{name: "baseline (one query)", run: func() ([]int64, *report.Result, error) {
			n, err := b.ViolationsTogether(ctx, rules)
			return n, nil, err
		}},
		{name: "generated --counts-only", run: generated(true, false)},
	}
	if max {
		variants = append(variants, &variant{name: "generated --max-window", run: generated(false, true)})
	}
	for round := range rounds {
		fmt.Fprintf(out, "round %d (load %s):", round+1, loadavg())
		var want []int64
		for vi, v := range variants {
			step, cpu := time.Now(), cpuSeconds()
			n, res, err := v.run()
			if err != nil {
				return err
			}
			v.secs = append(v.secs, time.Since(step).Seconds())
			v.cpu = append(v.cpu, cpuSeconds()-cpu)
			fmt.Fprintf(out, " %s %.2f s (CPU %.2f s);", v.name, v.secs[round], v.cpu[round])
			if vi == 0 {
				want = n
			}
			if !slices.Equal(n, want) {
				return fmt.Errorf("%s counts %v violations, %s %v", v.name, n, variants[0].name, want)
			}
			if round == 0 && res != nil {
				defer printRules(out, v.name, res)
			}
		}
		fmt.Fprintln(out)
	}
	fmt.Fprint(out, "min/median:")
	for _, v := range variants {
		fmt.Fprintf(out, " %s %.2f/%.2f s (CPU %.2f/%.2f s);", v.name, slices.Min(v.secs), median(v.secs), slices.Min(v.cpu), median(v.cpu))
	}
	fmt.Fprintln(out)
	return nil
}

// printRules prints what one query found, rule by rule.
func printRules(out io.Writer, name string, res *report.Result) {
	for _, r := range res.Groups[0].Report.Rules {
		fmt.Fprintf(out, "%s: %s: %d violations", name, r.Rule, r.Violations)
		if r.First != nil {
			fmt.Fprintf(out, ", first at index %d (%d sends in its window)", r.First.Index, r.First.Count)
		}
		if r.MaxInWindow > 0 {
			fmt.Fprintf(out, ", at most %d in one window", r.MaxInWindow)
		}
		fmt.Fprintln(out)
	}
}

// cpuSeconds is the user and system CPU time the process has used: on a
// shared machine it moves less than the wall time does.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// loadavg is the first three fields of /proc/loadavg, or "?".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

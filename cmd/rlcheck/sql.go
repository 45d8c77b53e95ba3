package main

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

func newSQLCmd(s streams) *cobra.Command {
	var ruleList, contractPath, boundary, unit, run, format string
	var t sqlcheck.Table
	var countsOnly bool
	cmd := &cobra.Command{
		Use:   "sql --table T --time-col C (--rules R | --contract F) [--run postgres://...]",
		Short: "Compile the rules into one SQL query over a table of sends (PostgreSQL, DuckDB), or run it",
		Long: `sql prints one query that checks a table of sends (one row a send, an integer
time column) with check's exact semantics, per rule and per key: the
violation count, the largest count in one window and the first violation.
With --run it executes the query on PostgreSQL and reports as check does,
with check's exit status. docs/sql.md explains the query.`,
		Example: `  rlcheck sql --contract api.yaml --table sends --time-col ts_ms --time-unit ms --key-col tenant
  rlcheck sql --rules 10/s --table sends --time-col ts --tiebreak id --run postgres://localhost/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec := sqlcheck.Spec{Table: t, CountsOnly: countsOnly}
			var err error
			if spec.Table.Unit, err = sqlcheck.ParseUnit(unit); err != nil {
				return usageError{err}
			}
			if contractPath != "" {
				c, err := contract.Load(contractPath)
				if err != nil {
					return usageError{err}
				}
				spec.Rules, spec.Boundary = c.Rules, c.Boundary
			}
			if ruleList != "" {
				rs, err := rule.ParseList(ruleList)
				if err != nil {
					return usageError{err}
				}
				spec.Rules = append(spec.Rules, rs...)
			}
			if boundary != "" {
				if spec.Boundary, err = rule.ParseBoundary(boundary); err != nil {
					return usageError{err}
				}
			}
			if t.Name == "" || t.TimeCol == "" || len(spec.Rules) == 0 {
				return usageError{errors.New("sql needs --table, --time-col and --rules or --contract")}
			}
			if run == "" {
				q, err := sqlcheck.Compile(spec)
				if err != nil {
					return usageError{err}
				}
				_, err = io.WriteString(s.out, q)
				return err
			}
			if !strings.HasPrefix(run, "postgres://") && !strings.HasPrefix(run, "postgresql://") {
				return usageError{errors.New("--run takes a postgres:// URL")}
			}
			db, err := sql.Open("pgx", run)
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := sqlcheck.Run(context.Background(), db, spec)
			if err != nil {
				return err
			}
			if err := logcheck.Write(s.out, []*logcheck.Result{res}, logcheck.ReportOptions{Format: format}); err != nil {
				return usageError{err}
			}
			if res.Violations() > 0 {
				return errViolations
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&ruleList, "rules", "", "comma-separated rules, e.g. 10/s,500/min")
	f.StringVar(&contractPath, "contract", "", "a contract file (YAML) naming the rules and the boundary")
	f.StringVar(&boundary, "boundary", "", "half-open (the default) or closed")
	f.StringVar(&t.Name, "table", "", "the table or view of sends, one row a send")
	f.StringVar(&t.TimeCol, "time-col", "", "the integer time column")
	f.StringVar(&unit, "time-unit", "ns", "unit of the time column: s, ms, us or ns")
	f.StringVar(&t.KeyCol, "key-col", "", "a column that splits the rules per key")
	f.StringVar(&t.Tiebreak, "tiebreak", "", "an integer column ordering sends at one instant, reported as their line")
	f.BoolVar(&countsOnly, "counts-only", false, "only the violation counts: one sort, no largest window or first violation")
	f.StringVar(&run, "run", "", "run the query on this PostgreSQL (postgres://...) and report")
	f.StringVar(&format, "format", "text", "with --run: text, json, junit or github")
	return cmd
}

package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

func newSQLCmd(s streams) *cobra.Command {
	rules := cli.RuleFlags{Warn: s.errOut}
	var unit, run string
	var format cli.Format
	var costs []string
	spec := sqlcheck.Spec{}
	cmd := &cobra.Command{
		Use:   "sql --table T --time-col C (--rules R | --contract F) [--run postgres://...]",
		Short: "Compile the rules into one SQL query over a table of sends (PostgreSQL, DuckDB), or run it",
		Long:  help("sql"),
		Example: `  rlcheck sql --contract api.yaml --table sends --time-col ts_ms --time-unit ms --key-col tenant
  rlcheck sql --rules 10/s --table sends --time-col ts --tiebreak id --run postgres://localhost/app`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := rules.Load()
			if err != nil {
				return usageError{err}
			}
			if _, err := format.Resolve(); err != nil {
				return usageError{err}
			}
			if spec.Table.Costs, err = cli.CostColumns(c.Rules, costs); err != nil {
				return usageError{err}
			}
			spec.Rules, spec.Boundary = c.Rules, c.Boundary
			if spec.Table.Unit, err = sqlcheck.ParseUnit(unit); err != nil {
				return usageError{err}
			}
			if spec.Table.Name == "" || spec.Table.TimeCol == "" || len(spec.Rules) == 0 {
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
			res, err := sqlcheck.RunURL(context.Background(), run, spec)
			if err != nil {
				return err
			}
			return writeReport(s, []*report.Result{res}, report.Options{Format: format.String()})
		},
	}
	f := cmd.Flags()
	rules.Add(f)
	f.StringVar(&spec.Table.Name, "table", "", "the table or view of sends, one row a send")
	f.StringVar(&spec.Table.TimeCol, "time-col", "", "the integer time column")
	f.StringVar(&unit, "time-unit", "ns", "unit of the time column: s, ms, us or ns")
	f.StringVar(&spec.Table.KeyCol, "key-col", "", "a column that splits the rules per key")
	f.StringVar(&spec.Table.Tiebreak, "tiebreak", "", "an integer column ordering sends at one instant, reported as their line")
	f.StringArrayVar(&costs, "cost", nil, "read a unit's cost from this integer column: UNIT=COLUMN (default: the column named as the unit)")
	f.BoolVar(&spec.CountsOnly, "counts-only", false, "only the violation counts: one sort, no first violation")
	f.BoolVar(&spec.MaxWindow, "max-window", false, "add the largest count in one window: one more sort per window width")
	f.StringVar(&run, "run", "", "run the query on this PostgreSQL (postgres://...) and report")
	format.Register(f, "text", "with --run", cli.ReportFormats...)
	return cmd
}

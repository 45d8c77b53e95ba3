package sqlcheck

import (
	"errors"
	"strings"

	"context"
	"database/sql"
	"fmt"
	"math"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// Querier is what Run needs of a database: *sql.DB and *sql.Conn have it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// RunURL runs spec on the PostgreSQL server a postgres:// URL names.
func RunURL(ctx context.Context, url string, spec Spec) (*report.Result, error) {
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, errors.New("sqlcheck: sqlcheck.RunURL takes a postgres:// URL")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return Run(ctx, db, spec)
}

// Run compiles spec, runs the query on db and returns the verdict as a
// report.Result, which report.Write reports as `rlcheck check` does.
func Run(ctx context.Context, db Querier, spec Spec) (*report.Result, error) {
	q, err := Compile(spec)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sqlcheck: %s: %w", spec.Table.Name, err)
	}
	defer rows.Close()
	res, err := collect(rows, spec)
	if err != nil {
		return nil, fmt.Errorf("sqlcheck: %s: %w", spec.Table.Name, err)
	}
	return res, nil
}

// row is one result row of the query; see Columns.
type row struct {
	key                           string
	ruleIndex                     int64
	ruleText                      string
	sends, firstT, lastT          int64
	violations                    int64
	firstIndex, firstT2, firstRef sql.NullInt64
	startIndex, startT, startRef  sql.NullInt64
	maxIn                         sql.NullInt64
	maxStartT, maxStartRef        sql.NullInt64
	badTimes                      int64
	// With CostColumns.
	firstCost, firstUnits, badCost sql.NullInt64
}

func collect(rows *sql.Rows, spec Spec) (*report.Result, error) {
	groups, err := readGroups(rows, spec)
	if err != nil {
		return nil, err
	}
	perKey := spec.Table.KeyCol != ""
	if len(groups) == 0 && !perKey {
		// An empty table: one empty group, as check reports an empty log.
		g := report.Group{Report: checker.Report{Boundary: spec.Boundary}}
		for _, r := range spec.Rules {
			g.Report.Rules = append(g.Report.Rules, checker.RuleReport{Rule: r})
		}
		groups = append(groups, g)
	}
	res := report.New(report.Result{Rules: spec.Rules, Boundary: spec.Boundary, PerKey: perKey}, groups)
	switch {
	case spec.CountsOnly:
		res.NotChecked = append(res.NotChecked, "the largest count in one window and the first violations (counts only)")
	case !spec.MaxWindow:
		res.NotChecked = append(res.NotChecked, "the largest count in one window, shown as - (--max-window adds it, at the cost of a sort per window width)")
	}
	res.NoMaxInWindow = !spec.MaxWindow
	detected := "integer " + map[string]string{"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[unitName(spec.Table.Unit)]
	res.Files = []report.FileInfo{{Name: spec.Table.Name, Format: "sql", Column: spec.Table.TimeCol,
		Detected: detected, Lines: res.Sends, Sends: res.Sends, LineFormat: lineFormat(spec.Table)}}
	return res, nil
}

// rowReader turns the query's values into the checker's: times in
// nanoseconds, tiebreaks as line numbers.
type rowReader struct{ spec Spec }

func (rd rowReader) ns(t int64) (int64, error) {
	unit := int64(rd.spec.Table.Unit)
	if t > math.MaxInt64/unit || t < math.MinInt64/unit {
		return 0, fmt.Errorf("time %d %s is beyond int64 nanoseconds", t, unitName(rd.spec.Table.Unit))
	}
	return t * unit, nil
}

func (rd rowReader) send(t, r sql.NullInt64) (checker.Send, error) {
	at, err := rd.ns(t.Int64)
	if err != nil {
		return checker.Send{}, err
	}
	if r.Int64 < 0 || r.Int64 >= 1<<48 {
		return checker.Send{}, fmt.Errorf("tiebreak value %d: want 0 to 2^48-1, as a line number", r.Int64)
	}
	return checker.Send{At: at, Ref: int64(report.MakeRef(0, r.Int64))}, nil
}

// readGroups reads one row per key and rule into one group per key, in
// the order the keys come.
func readGroups(rows *sql.Rows, spec Spec) ([]report.Group, error) {
	rd := rowReader{spec}
	var groups []report.Group
	byKey := map[string]int{}
	names, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r row
		dest := []any{&r.key, &r.ruleIndex, &r.ruleText, &r.sends, &r.firstT, &r.lastT,
			&r.violations, &r.firstIndex, &r.firstT2, &r.firstRef,
			&r.startIndex, &r.startT, &r.startRef, &r.maxIn, &r.maxStartT, &r.maxStartRef, &r.badTimes}
		if len(names) > len(Columns) {
			dest = append(dest, &r.firstCost, &r.firstUnits, &r.badCost)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if r.ruleIndex < 0 || int(r.ruleIndex) >= len(spec.Rules) {
			return nil, fmt.Errorf("row for rule %d of %d", r.ruleIndex, len(spec.Rules))
		}
		if r.badTimes > 0 {
			return nil, rd.badTimes(r.badTimes)
		}
		if r.badCost.Valid {
			return nil, rd.badCost(r)
		}
		gi, ok := byKey[r.key]
		if !ok {
			g, err := rd.group(r)
			if err != nil {
				return nil, err
			}
			gi = len(groups)
			byKey[r.key] = gi
			groups = append(groups, g)
		}
		rr, err := rd.rule(r)
		if err != nil {
			return nil, err
		}
		groups[gi].Report.Rules[r.ruleIndex] = rr
	}
	return groups, rows.Err()
}

// group starts the group of r's key.
func (rd rowReader) group(r row) (report.Group, error) {
	first, err := rd.ns(r.firstT)
	if err != nil {
		return report.Group{}, err
	}
	last, err := rd.ns(r.lastT)
	if err != nil {
		return report.Group{}, err
	}
	return report.Group{Key: r.key, Report: checker.Report{
		Sends: r.sends, First: first, Last: last, Boundary: rd.spec.Boundary,
		Rules: make([]checker.RuleReport, len(rd.spec.Rules)),
	}}, nil
}

// rule is r's rule report.
func (rd rowReader) rule(r row) (checker.RuleReport, error) {
	rr := checker.RuleReport{Rule: rd.spec.Rules[r.ruleIndex], Violations: r.violations, MaxInWindow: r.maxIn.Int64}
	var err error
	if r.maxIn.Valid && r.maxStartT.Valid {
		if rr.MaxWindowStart, err = rd.send(r.maxStartT, r.maxStartRef); err != nil {
			return rr, err
		}
	}
	if r.firstIndex.Valid {
		v := &checker.Violation{Index: r.firstIndex.Int64, Count: r.firstIndex.Int64 - r.startIndex.Int64 + 1}
		if v.Send, err = rd.send(r.firstT2, r.firstRef); err != nil {
			return rr, err
		}
		if v.WindowStart, err = rd.send(r.startT, r.startRef); err != nil {
			return rr, err
		}
		if rr.Rule.Unit != "" {
			v.Cost, v.Units = r.firstCost.Int64, r.firstUnits.Int64
		}
		if rr.Rule.Kind == rule.Fixed {
			from, to, err := rr.Rule.FixedWindow(v.Send.At)
			if err != nil {
				return rr, err
			}
			v.Span = &checker.Span{From: from, To: to}
		}
		rr.First = v
	}
	return rr, nil
}

// badTimes is the error for a table with n rows whose time is NULL,
// negative or not a whole number: check refuses such a line, and the
// query would drop or round it.
func (rd rowReader) badTimes(n int64) error {
	sends := fmt.Sprintf("%d sends have", n)
	if n == 1 {
		sends = "1 send has"
	}
	return fmt.Errorf("%s a NULL, negative or fractional time (column %s): each send needs a whole number of %s from 0 up",
		sends, rd.spec.Table.TimeCol, map[string]string{"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[unitName(rd.spec.Table.Unit)])
}

// badCost is the error for a key whose sends include one without a whole
// cost of 0 or more in r's rule's unit, at the time r names.
func (rd rowReader) badCost(r row) error {
	unit := rd.spec.Rules[r.ruleIndex].Unit
	col := unit
	if c, ok := rd.spec.Table.Costs[unit]; ok {
		col = c
	}
	where := ""
	if rd.spec.Table.KeyCol != "" {
		where = fmt.Sprintf(" of key %q", r.key)
	}
	return fmt.Errorf("a send%s at %s = %d has a NULL, negative or fractional %s (column %s): each send needs a whole cost of 0 or more",
		where, rd.spec.Table.TimeCol, r.badCost.Int64, unit, col)
}

// lineFormat names a send in the text report as the table can: by its
// tiebreak column and value ("line 28", check's own words when the column
// holds the log's line numbers), else by its rank in time order, which is
// no file's line (a CSV with a header has its first send on line 2, and
// rank 1).
func lineFormat(t Table) string {
	if t.Tiebreak != "" {
		return strings.ReplaceAll(t.Tiebreak, "%", "%%") + " %d"
	}
	if t.KeyCol != "" {
		return "#%d in its key's time order"
	}
	return "#%d in time order"
}

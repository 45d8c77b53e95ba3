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
	"github.com/rlcheck/rlcheck/logcheck"
)

// Querier is what Run needs of a database: *sql.DB and *sql.Conn have it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// RunURL runs spec on the PostgreSQL server a postgres:// URL names.
func RunURL(ctx context.Context, url string, spec Spec) (*logcheck.Result, error) {
	if !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://") {
		return nil, errors.New("sqlcheck: --run takes a postgres:// URL")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return Run(ctx, db, spec)
}

// Run compiles spec, runs the query on db and returns the verdict as a
// logcheck.Result, which logcheck.Write reports as `rlcheck check` does.
func Run(ctx context.Context, db Querier, spec Spec) (*logcheck.Result, error) {
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
}

func collect(rows *sql.Rows, spec Spec) (*logcheck.Result, error) {
	unit := int64(spec.Table.Unit)
	ns := func(t int64) (int64, error) {
		if t > math.MaxInt64/unit || t < math.MinInt64/unit {
			return 0, fmt.Errorf("time %d %s is beyond int64 nanoseconds", t, unitName(spec.Table.Unit))
		}
		return t * unit, nil
	}
	ref := func(r sql.NullInt64) (int64, error) {
		if r.Int64 < 0 || r.Int64 >= 1<<48 {
			return 0, fmt.Errorf("tiebreak value %d: want 0 to 2^48-1, as a line number", r.Int64)
		}
		return int64(logcheck.MakeRef(0, r.Int64)), nil
	}
	send := func(t, r sql.NullInt64) (checker.Send, error) {
		at, err := ns(t.Int64)
		if err != nil {
			return checker.Send{}, err
		}
		rf, err := ref(r)
		return checker.Send{At: at, Ref: rf}, err
	}
	res := &logcheck.Result{Rules: spec.Rules, Boundary: spec.Boundary, PerKey: spec.Table.KeyCol != ""}
	byKey := map[string]int{}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.key, &r.ruleIndex, &r.ruleText, &r.sends, &r.firstT, &r.lastT,
			&r.violations, &r.firstIndex, &r.firstT2, &r.firstRef,
			&r.startIndex, &r.startT, &r.startRef, &r.maxIn, &r.maxStartT, &r.maxStartRef); err != nil {
			return nil, err
		}
		if r.ruleIndex < 0 || int(r.ruleIndex) >= len(spec.Rules) {
			return nil, fmt.Errorf("row for rule %d of %d", r.ruleIndex, len(spec.Rules))
		}
		gi, ok := byKey[r.key]
		if !ok {
			first, err := ns(r.firstT)
			if err != nil {
				return nil, err
			}
			last, err := ns(r.lastT)
			if err != nil {
				return nil, err
			}
			gi = len(res.Groups)
			byKey[r.key] = gi
			res.Groups = append(res.Groups, logcheck.Group{Key: r.key, Report: checker.Report{
				Sends: r.sends, First: first, Last: last, Boundary: spec.Boundary,
				Rules: make([]checker.RuleReport, len(spec.Rules)),
			}})
		}
		rr := checker.RuleReport{Rule: spec.Rules[r.ruleIndex], Violations: r.violations, MaxInWindow: r.maxIn.Int64}
		var err error
		if r.maxIn.Valid && r.maxStartT.Valid {
			if rr.MaxWindowStart, err = send(r.maxStartT, r.maxStartRef); err != nil {
				return nil, err
			}
		}
		if r.firstIndex.Valid {
			v := &checker.Violation{Index: r.firstIndex.Int64, Count: r.firstIndex.Int64 - r.startIndex.Int64 + 1}
			if v.Send, err = send(r.firstT2, r.firstRef); err != nil {
				return nil, err
			}
			if v.WindowStart, err = send(r.startT, r.startRef); err != nil {
				return nil, err
			}
			rr.First = v
		}
		res.Groups[gi].Report.Rules[r.ruleIndex] = rr
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(res.Groups) == 0 && !res.PerKey {
		// An empty table: one empty group, as check reports an empty log.
		g := logcheck.Group{Report: checker.Report{Boundary: spec.Boundary}}
		for _, r := range spec.Rules {
			g.Report.Rules = append(g.Report.Rules, checker.RuleReport{Rule: r})
		}
		res.Groups = append(res.Groups, g)
	}
	detected := "integer " + map[string]string{"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[unitName(spec.Table.Unit)]
	logcheck.Finish(res)
	switch {
	case spec.CountsOnly:
		res.NotChecked = append(res.NotChecked, "the largest count in one window and the first violations (counts only)")
	case !spec.MaxWindow:
		res.NotChecked = append(res.NotChecked, "the largest count in one window, shown as - (--max-window adds it, at the cost of a sort per window width)")
	}
	res.NoMaxInWindow = !spec.MaxWindow
	res.Files = []logcheck.FileInfo{{Name: spec.Table.Name, Format: "sql", Column: spec.Table.TimeCol,
		Detected: detected, Lines: res.Sends, Sends: res.Sends, LineFormat: lineFormat(spec.Table)}}
	return res, nil
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

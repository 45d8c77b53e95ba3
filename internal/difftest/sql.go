package difftest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/sqlcheck"
)

// SQLJudges reports whether sql judges a family: bucket and first-call
// rules are a recursion over every earlier send, which sqlcheck refuses
// (docs/sql.md).
func SQLJudges(f Family) bool { return f != Bucket && f != FirstCall }

// Execer is what loading a table needs of a database: *sql.DB and
// *sql.Conn have it.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// LoadSQL writes the case into table: ts (ns), key, line (the send's line
// in the case's CSV, the tiebreak) and one column per unit.
func (c Case) LoadSQL(ctx context.Context, db Execer, table string) error {
	cols := []string{"ts bigint", "key text", "line bigint"}
	for _, u := range c.Units() {
		cols = append(cols, u+" bigint")
	}
	for _, q := range []string{"DROP TABLE IF EXISTS " + table,
		fmt.Sprintf("CREATE TABLE %s (%s)", table, strings.Join(cols, ", "))} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for lo := 0; lo < len(c.Sends); lo += 500 {
		var rows []string
		for i := lo; i < min(lo+500, len(c.Sends)); i++ {
			s := c.Sends[i]
			row := fmt.Sprintf("(%d, '%s', %d", s.At, s.Key, i+2)
			for _, u := range c.Units() {
				row += fmt.Sprintf(", %d", s.Costs[u])
			}
			rows = append(rows, row+")")
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s VALUES %s", table, strings.Join(rows, ", "))); err != nil {
			return err
		}
	}
	return nil
}

// SQLSpec is the query's spec for the case loaded in table, with the
// fullest window.
func (c Case) SQLSpec(table string) sqlcheck.Spec {
	spec := sqlcheck.Spec{Rules: c.Rules, Boundary: c.Boundary, MaxWindow: true,
		Table: sqlcheck.Table{Name: table, TimeCol: "ts", Unit: time.Nanosecond, Tiebreak: "line"}}
	if c.Keyed {
		spec.Table.KeyCol = "key"
	}
	return spec
}

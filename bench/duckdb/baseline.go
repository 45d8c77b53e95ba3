package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/rlcheck/rlcheck/rule"
)

// Baseline is one in-memory DuckDB database holding the send log in table t.
// It pins a single connection so that every statement sees the same session.
type Baseline struct {
	connector *duckdb.Connector
	db        *sql.DB
	conn      *sql.Conn
}

// Open starts an empty in-memory database; threads > 0 overrides DuckDB's
// default worker count (the number of cores it detects).
func Open(ctx context.Context, threads int) (*Baseline, error) {
	connector, err := duckdb.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	b := &Baseline{connector: connector, db: sql.OpenDB(connector)}
	if b.conn, err = b.db.Conn(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("open duckdb: %w", err)
	}
	if threads > 0 {
		if _, err := b.conn.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
			b.Close()
			return nil, fmt.Errorf("set threads: %w", err)
		}
	}
	return b, nil
}

// Close releases the connection and the database.
func (b *Baseline) Close() error {
	var errs []error
	if b.conn != nil {
		errs = append(errs, b.conn.Close())
	}
	errs = append(errs, b.db.Close(), b.connector.Close())
	return errors.Join(errs...)
}

// Settings reports the DuckDB library version and the worker threads in use.
func (b *Baseline) Settings(ctx context.Context) (version string, threads int64, err error) {
	err = b.conn.QueryRowContext(ctx,
		"SELECT version(), current_setting('threads')::BIGINT").Scan(&version, &threads)
	if err != nil {
		return "", 0, fmt.Errorf("read settings: %w", err)
	}
	return version, threads, nil
}

// Load reads the CSV into table t with fixed column types, so that DuckDB
// spends no time sniffing and timestamps stay exact 64-bit integers.
func (b *Baseline) Load(ctx context.Context, csvPath string) (rows int64, err error) {
	const load = `CREATE TABLE t AS SELECT * FROM read_csv(?, header = true,
		columns = {'ts_ns': 'BIGINT', 'key': 'VARCHAR'})`
	if _, err := b.conn.ExecContext(ctx, load, csvPath); err != nil {
		return 0, fmt.Errorf("load %s: %w", csvPath, err)
	}
	if err := b.conn.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&rows); err != nil {
		return 0, fmt.Errorf("count rows: %w", err)
	}
	return rows, nil
}

// Violations counts the sends that break r under the half-open boundary:
// those whose r.Limit-th predecessor is less than r.Window earlier.
func (b *Baseline) Violations(ctx context.Context, r rule.Rule) (int64, error) {
	// lag's offset must be a constant, so the rule is formatted in; both
	// values are integers and cannot carry SQL.
	q := fmt.Sprintf(`SELECT count(*) FROM (
		SELECT ts_ns - lag(ts_ns, %d) OVER (ORDER BY ts_ns) AS d FROM t
	) WHERE d < %d`, r.Limit, r.Window.Nanoseconds())
	var n int64
	if err := b.conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("rule %s: %w", r, err)
	}
	return n, nil
}

// ViolationsTogether counts every rule in one query over one window, so that
// DuckDB sorts the log once instead of once per rule: the stronger baseline.
func (b *Baseline) ViolationsTogether(ctx context.Context, rules []rule.Rule) ([]int64, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	var lags, counts []string
	for i, r := range rules {
		lags = append(lags, fmt.Sprintf("ts_ns - lag(ts_ns, %d) OVER w AS d%d", r.Limit, i))
		counts = append(counts, fmt.Sprintf("count(*) FILTER (WHERE d%d < %d)", i, r.Window.Nanoseconds()))
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM t WINDOW w AS (ORDER BY ts_ns))",
		strings.Join(counts, ", "), strings.Join(lags, ", "))
	got := make([]int64, len(rules))
	dest := make([]any, len(rules))
	for i := range got {
		dest[i] = &got[i]
	}
	if err := b.conn.QueryRowContext(ctx, q).Scan(dest...); err != nil {
		return nil, fmt.Errorf("rules %v: %w", rules, err)
	}
	return got, nil
}

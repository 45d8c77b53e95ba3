package sqlcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/genlog"
	"github.com/rlcheck/rlcheck/internal/pgtest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// BenchmarkPostgres1M checks the benchmark log's first million sends in
// PostgreSQL, per key and as one stream (docs/benchmarks.md):
//
//	go test ./sqlcheck -run '^$' -bench Postgres1M -benchtime 3x
func BenchmarkPostgres1M(b *testing.B) {
	srv, db := pgtest.Start(b)
	path := filepath.Join(srv.Dir, "sends.csv")
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, genlog.WriteCSV(f, genlog.Default(1_000_000)))
	require.NoError(b, f.Close())
	require.NoError(b, os.Chmod(path, 0o644))
	_, err = db.Exec("CREATE TABLE sends (ts_ns bigint, key text); COPY sends FROM '" + path + "' WITH (FORMAT csv, HEADER true); ANALYZE sends")
	require.NoError(b, err)
	rules, err := rule.ParseList("10/1s,500/1m,600000/24h")
	require.NoError(b, err)
	for _, key := range []string{"", "key"} {
		name := "whole"
		if key != "" {
			name = "per-key"
		}
		b.Run(name, func(b *testing.B) {
			spec := sqlcheck.Spec{Rules: rules, Table: sqlcheck.Table{Name: "sends", TimeCol: "ts_ns", Unit: time.Nanosecond, KeyCol: key}}
			for b.Loop() {
				res, err := sqlcheck.Run(context.Background(), db, spec)
				require.NoError(b, err)
				b.ReportMetric(float64(res.Violations()), "violations")
			}
		})
	}
}

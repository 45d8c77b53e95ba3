package sqlcheck_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/pgtest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// quoteIdent quotes a name for the test's own statements.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// TestPostgresQuotesEveryName pins down that --key-col user compiled to
// CAST(user AS VARCHAR), which PostgreSQL reads as current_user (one key,
// "postgres", and a wrong verdict), and that --table user failed: every
// name is quoted, and reserved words, mixed case, quotes and spaces name
// the table and columns they spell, on a real PostgreSQL.
func TestPostgresQuotesEveryName(t *testing.T) {
	_, db := pgtest.Start(t)
	ctx := context.Background()
	// Two keys of two sends each, 100 ms apart: 1/1s breaks once per key;
	// read as one key, it breaks three times.
	rows := []struct {
		t     int64
		key   string
		order int64
	}{{1000, "a", 2}, {1100, "a", 3}, {1000, "b", 4}, {1100, "b", 5}}
	for _, names := range []struct{ schema, table, ts, key, tb string }{
		{"", "sends_by_user", "ts", "user", "line"},
		{"", "user", "time", "user", "order"},
		{"", "Sends", "Ts", "User", "Order"},
		{"My Schema", `we"ird t`, `t "ms"`, "the key", "select"},
		{"public", "group", "from", "current_user", "line"},
	} {
		table := quoteIdent(names.table)
		name := names.table
		if names.schema != "" {
			_, err := db.Exec("CREATE SCHEMA IF NOT EXISTS " + quoteIdent(names.schema))
			require.NoError(t, err)
			table = quoteIdent(names.schema) + "." + table
			name = names.schema + "." + name
		}
		_, err := db.Exec(fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (%s bigint, %s text, %s bigint)",
			table, table, quoteIdent(names.ts), quoteIdent(names.key), quoteIdent(names.tb)))
		require.NoError(t, err, names)
		for _, r := range rows {
			_, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES (%d, '%s', %d)", table, r.t, r.key, r.order))
			require.NoError(t, err, names)
		}
		spec := sqlcheck.Spec{Rules: []rule.Rule{{Limit: 1, Window: time.Second}}, MaxWindow: true, Table: sqlcheck.Table{
			Name: name, TimeCol: names.ts, Unit: time.Millisecond, KeyCol: names.key, Tiebreak: names.tb}}
		res, err := sqlcheck.Run(ctx, db, spec)
		if !assert.NoError(t, err, names) {
			continue
		}
		var keys []string
		for _, g := range res.Groups {
			keys = append(keys, g.Key)
			assert.Equal(t, int64(1), g.Report.Rules[0].Violations, "%+v, key %q", names, g.Key)
		}
		assert.Equal(t, []string{"a", "b"}, keys, names)
		assert.Equal(t, int64(2), res.Violations(), names)
	}
}

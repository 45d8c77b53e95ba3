package difftest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/pgtest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// TestSQLOnPostgresMatchesOracle: sqlcheck's query, run on a real
// PostgreSQL, counts each key's violations of sliding, fixed and zoned
// rules, call and cost, as the oracle does, and names the same first
// violation (by line, the tiebreak) and fullest window. Bucket and
// first-call rules it refuses, saying why; those pairs are skipped, and so
// are days in a zone whose date ran back across midnight, which the query
// keys by local date (docs/sql.md).
func TestSQLOnPostgresMatchesOracle(t *testing.T) {
	_, db := pgtest.Start(t) // skips without PostgreSQL unless RLCHECK_REQUIRE_POSTGRES=1
	ctx := context.Background()
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			if !SQLJudges(f) {
				_, err := sqlcheck.Compile(draws(f, 1, 4)[0].SQLSpec("sends"))
				require.Error(t, err)
				t.Skipf("sql refuses %s rules: %v", f, err)
			}
			for i, c := range draws(f, testrun.Seeds(3, 60), 4) {
				if c.LivesADateTwice() {
					continue // the query keys days by local date there (docs/sql.md)
				}
				require.NoError(t, c.LoadSQL(ctx, db, "sends"))
				res, err := sqlcheck.Run(ctx, db, c.SQLSpec("sends"))
				require.NoError(t, err, c.String())
				if !assert.Equal(t, Summaries(Expect(c)), SummariesOf(res), "seed %d: %s", i, c) {
					return
				}
			}
		})
	}
}

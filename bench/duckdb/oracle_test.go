package main

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/difftest"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// TestGeneratedMatchesOracle: the generated query, run in DuckDB, counts
// each key's violations of sliding, fixed and zoned rules, call and cost,
// as the main module's brute-force oracle (internal/oracle, through
// internal/difftest's cases) does, and names the same first violation and
// fullest window. Bucket and first-call rules the query refuses, saying
// why; those pairs are skipped, and so are days in a zone whose date ran
// back across midnight, which the query keys by local date (docs/sql.md).
// RLCHECK_FULL=1 runs many more seeds.
func TestGeneratedMatchesOracle(t *testing.T) {
	ctx := context.Background()
	b, err := Open(ctx, 1)
	require.NoError(t, err)
	defer b.Close()
	for _, f := range difftest.Families {
		t.Run(f.String(), func(t *testing.T) {
			for seed := range uint64(testrun.Seeds(3, 60)) {
				rng := rand.New(rand.NewPCG(seed, 5+uint64(f)))
				c := difftest.Draw(rng, f, difftest.Options{Tiny: seed%2 == 0, Keys: seed%3 == 1, Sends: 40 + rng.IntN(120)})
				if !difftest.SQLJudges(f) {
					_, err := sqlcheck.Compile(c.SQLSpec("sends"))
					require.Error(t, err)
					t.Skipf("sql refuses %s rules: %v", f, err)
				}
				if c.LivesADateTwice() {
					continue
				}
				require.NoError(t, c.LoadSQL(ctx, b.conn, "sends"))
				res, err := sqlcheck.Run(ctx, b.conn, c.SQLSpec("sends"))
				require.NoError(t, err, c.String())
				if !assert.Equal(t, difftest.Summaries(difftest.Expect(c)), difftest.SummariesOf(res), "seed %d: %s", seed, c) {
					return
				}
			}
		})
	}
}

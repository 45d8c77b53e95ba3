package sqlcheck_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/golden"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// The example contract's query, as docs/sql.md shows it, is pinned.
func TestCompileGolden(t *testing.T) {
	c, err := contract.Load("../testdata/contracts/api.yaml")
	require.NoError(t, err)
	q, err := sqlcheck.Compile(sqlcheck.Spec{Rules: c.Rules, Boundary: c.Boundary, Table: sqlcheck.Table{
		Name: "sends", TimeCol: "ts_ms", Unit: time.Millisecond, KeyCol: "tenant", Tiebreak: "line"}})
	require.NoError(t, err)
	golden.Assert(t, "api.sql", q)
}

func TestReach(t *testing.T) {
	for _, tc := range []struct {
		w, unit time.Duration
		b       rule.Boundary
		want    int64
	}{
		{time.Second, time.Millisecond, rule.HalfOpen, 999},
		{time.Second, time.Millisecond, rule.Closed, 1000},
		{1500 * time.Microsecond, time.Millisecond, rule.HalfOpen, 1}, // gaps of 0 or 1 ms are under 1.5 ms
		{1500 * time.Microsecond, time.Millisecond, rule.Closed, 1},
		{time.Nanosecond, time.Second, rule.HalfOpen, 0}, // only ties
		{time.Nanosecond, time.Second, rule.Closed, 0},
	} {
		assert.Equal(t, tc.want, sqlcheck.Reach(tc.w, tc.unit, tc.b), "%v in %v, %s", tc.w, tc.unit, tc.b)
	}
}

func TestCompileRejects(t *testing.T) {
	ok := sqlcheck.Table{Name: "sends", TimeCol: "ts", Unit: time.Nanosecond}
	rules := []rule.Rule{{Limit: 1, Window: time.Second}}
	for name, spec := range map[string]sqlcheck.Spec{
		"no rules":    {Table: ok},
		"no table":    {Table: sqlcheck.Table{TimeCol: "ts", Unit: time.Nanosecond}, Rules: rules},
		"bad unit":    {Table: sqlcheck.Table{Name: "s", TimeCol: "ts", Unit: time.Minute}, Rules: rules},
		"empty part":  {Table: sqlcheck.Table{Name: "a..b", TimeCol: "ts", Unit: time.Nanosecond}, Rules: rules},
		"zero window": {Table: ok, Rules: []rule.Rule{{Limit: 1}}},
	} {
		_, err := sqlcheck.Compile(spec)
		assert.Error(t, err, name)
	}
	// Every name is quoted, quotes doubled.
	q, err := sqlcheck.Compile(sqlcheck.Spec{Rules: rules, Table: sqlcheck.Table{Name: `app.Sends"x`, TimeCol: "Ts", Unit: time.Nanosecond}})
	require.NoError(t, err)
	assert.Contains(t, q, `FROM "app"."Sends""x"`)
	assert.Contains(t, q, `CAST("Ts" AS BIGINT)`)
}

// docs/sql.md shows the pinned query.
func TestDocsShowQuery(t *testing.T) {
	doc, err := os.ReadFile("../docs/sql.md")
	require.NoError(t, err)
	q, err := os.ReadFile("testdata/api.sql")
	require.NoError(t, err)
	assert.Contains(t, string(doc), string(q), "paste sqlcheck/testdata/api.sql into docs/sql.md")
}

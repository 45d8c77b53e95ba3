package sqlcheck_test

import (
	"os"
	"regexp"
	"strings"
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

// DuckDB's / divides integers as floats (PostgreSQL's truncates), so the
// query, which runs on both, divides no integer where rounding could move
// a send: fixed windows are named by their start, found without a
// division, and only a zone's whole seconds are divided, an exact
// multiple cast back to BIGINT.
func TestCompiledQueryDividesNoIntegers(t *testing.T) {
	cast := regexp.MustCompile(`\) / \d+ AS BIGINT\)|'[^']*'`) // and the rules' texts
	for _, unit := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, time.Second} {
		for _, text := range []string{"1/100ns fixed", "3/1s fixed at 250ms", "10 tokens/1m fixed", "5/1d fixed at 00:00 America/New_York", "10 tokens/1s", "5/1s"} {
			r, err := rule.Parse(text)
			require.NoError(t, err)
			for _, countsOnly := range []bool{false, true} {
				q, err := sqlcheck.Compile(sqlcheck.Spec{Rules: []rule.Rule{r}, CountsOnly: countsOnly,
					Table: sqlcheck.Table{Name: "sends", TimeCol: "ts", Unit: unit, Tiebreak: "line"}})
				require.NoError(t, err)
				var body []string
				for _, line := range strings.Split(q, "\n") {
					if !strings.HasPrefix(line, "--") {
						body = append(body, line)
					}
				}
				rest := cast.ReplaceAllString(strings.Join(body, "\n"), "")
				assert.NotContains(t, rest, "/", "%s in %v:\n%s", text, unit, q)
			}
		}
	}
	q, err := sqlcheck.Compile(sqlcheck.Spec{Rules: []rule.Rule{{Limit: 1, Window: 100, Kind: rule.Fixed}},
		Table: sqlcheck.Table{Name: "sends", TimeCol: "ts", Unit: time.Nanosecond}})
	require.NoError(t, err)
	assert.Contains(t, q, "(t - ((t % 100) + 100) % 100) AS w", "the window's start names it")
}

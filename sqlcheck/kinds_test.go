package sqlcheck_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/pgtest"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// costSend is one row with a cost in tokens.
type costSend struct {
	send
	tokens int64
}

// loadCosts creates table name holding sends, their costs in column col.
func loadCosts(t *testing.T, db *sql.DB, name, col string, sends []costSend) {
	t.Helper()
	_, err := db.Exec(fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (ts bigint, tenant text, line bigint, %s bigint)", name, name, col))
	require.NoError(t, err)
	for lo := 0; lo < len(sends); lo += 500 {
		var vals []string
		for _, s := range sends[lo:min(lo+500, len(sends))] {
			vals = append(vals, fmt.Sprintf("(%d, '%s', %d, %d)", s.t, s.key, s.line, s.tokens))
		}
		_, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES %s", name, strings.Join(vals, ",")))
		require.NoError(t, err)
	}
}

// checkCostCSV runs logcheck on the sends written as a CSV in line order,
// times in ns, costs in a tokens column.
func checkCostCSV(t *testing.T, sends []costSend, unit time.Duration, rules []rule.Rule, b rule.Boundary, keyed bool) *report.Result {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("ts,tenant,tokens\n")
	for _, s := range sends {
		fmt.Fprintf(&buf, "%d,%s,%d\n", s.t*int64(unit), s.key, s.tokens)
	}
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos,
		Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}}
	if keyed {
		read.KeyCol = "tenant"
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &buf}},
		logcheck.Config{Rules: rules, Boundary: b, Read: read, Sort: true})
	require.NoError(t, err)
	return res
}

// randomCostSends are randomSends with sends on fixed windows' edges and
// costs of 0, limit, limit+1 and a little, starting a minute before
// midnight in New York; the rows are in line order.
func randomCostSends(rng *rand.Rand, n int, w, perSecond, limit int64, keys int) []costSend {
	sends := make([]costSend, n)
	at := time.Date(2026, 3, 8, 4, 59, 0, 0, time.UTC).Unix()*perSecond + rng.Int64N(1000)
	for i := range sends {
		switch rng.IntN(7) {
		case 0: // a tie
		case 1:
			at += w
		case 2:
			at += w - 1
		case 3:
			at += w - at%w // a fixed window's edge
		default:
			at += rng.Int64N(w/3 + 1)
		}
		cost := rng.Int64N(4)
		switch rng.IntN(10) {
		case 0:
			cost = 0
		case 1:
			cost = limit
		case 2:
			cost = limit + 1
		}
		sends[i] = costSend{send{t: at, key: fmt.Sprintf("k%d", rng.IntN(keys)), line: int64(i) + 2}, cost}
	}
	return sends
}

func parseRules(t *testing.T, texts ...string) []rule.Rule {
	t.Helper()
	var rules []rule.Rule
	for _, s := range texts {
		r, err := rule.Parse(s)
		require.NoError(t, err)
		rules = append(rules, r)
	}
	return rules
}

// The query judges cost rules on sliding windows and fixed rules, call
// and cost, with an offset and in a time zone, as check does: counts,
// first violations with their costs and windows, and the fullest windows,
// beside sliding call rules, on logs with ties, sends on window edges and
// costs of 0, N and N+1.
func TestPostgresMatchesCheckCostsAndFixed(t *testing.T) {
	_, db := pgtest.Start(t)
	ctx := context.Background()
	units := []time.Duration{time.Millisecond, time.Microsecond, time.Nanosecond, time.Second}
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 23))
		unit := units[seed%4]
		b := rule.HalfOpen
		if seed%3 == 2 {
			b = rule.Closed
		}
		keyed := seed%2 == 0
		base := time.Duration(1+rng.IntN(3)) * time.Second
		rules := parseRules(t, fmt.Sprintf("10 tokens/%v", base), fmt.Sprintf("3/%v", base), fmt.Sprintf("3/%v fixed", base),
			fmt.Sprintf("25 tokens/%v fixed at %v", 3*base, base/2), fmt.Sprintf("12 tokens/%v", base+unit/2+1),
			"300/1d fixed at 00:00 America/New_York", "700 tokens/1d fixed at 00:00 America/New_York", "100000 tokens/1h")
		sends := randomCostSends(rng, 300+rng.IntN(400), int64(base/unit), int64(time.Second/unit), 10, 1+2*int(seed%2))
		if keyed {
			sends = append(sends, costSend{send{t: sends[len(sends)-1].t, key: "quiet", line: int64(len(sends)) + 2}, 0})
		}
		loadCosts(t, db, "sends", "used", sends)
		name := fmt.Sprintf("seed %d, unit %v, %s, keyed %v", seed, unit, b, keyed)
		spec := sqlcheck.Spec{Rules: rules, Boundary: b, MaxWindow: true, Table: sqlcheck.Table{
			Name: "sends", TimeCol: "ts", Unit: unit, Tiebreak: "line", Costs: map[string]string{"tokens": "used"}}}
		if keyed {
			spec.Table.KeyCol = "tenant"
		}
		got, err := sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		want := checkCostCSV(t, sends, unit, rules, b, keyed)
		assert.Equal(t, verdict(t, want), verdict(t, got), name)
		spec.MaxWindow = false
		got, err = sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		assert.Equal(t, withoutMax(t, verdict(t, want)), withoutMax(t, verdict(t, got)), name)
		spec.CountsOnly = true
		counts, err := sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		require.Len(t, counts.Groups, len(want.Groups), name)
		for g := range want.Groups {
			for r, rr := range want.Groups[g].Report.Rules {
				assert.Equal(t, rr.Violations, counts.Groups[g].Report.Rules[r].Violations, "%s, counts only, rule %s", name, rr.Rule)
			}
		}
	}
}

// Bucket and first-call rules are refused with the reason, and a cost
// rule without a tiebreak: the order of sends at one instant decides
// which breaks it.
func TestCompileRefusesWhatNoQueryJudges(t *testing.T) {
	table := sqlcheck.Table{Name: "sends", TimeCol: "ts", Unit: time.Millisecond, Tiebreak: "line"}
	for text, want := range map[string]string{
		"10/1s burst 20":    "rule 10/1s burst 20: a bucket's level before a send",
		"100/1m first-call": "rule 100/1m first-call: a first-call window opens at the first send after the one before it closed",
	} {
		_, err := sqlcheck.Compile(sqlcheck.Spec{Rules: parseRules(t, "5/1s", text), Table: table})
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want)
		assert.Contains(t, err.Error(), "no set-based query computes exactly")
	}
	table.Tiebreak = ""
	_, err := sqlcheck.Compile(sqlcheck.Spec{Rules: parseRules(t, "90 tokens/1m"), Table: table})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "which of the sends at one instant breaks a cost rule depends on their order")
	// Fixed call rules need no tiebreak: their counts do not depend on
	// the order of ties.
	_, err = sqlcheck.Compile(sqlcheck.Spec{Rules: parseRules(t, "5/1s fixed"), Table: table})
	assert.NoError(t, err)
}

// A NULL or negative cost is an error naming the column and the send's
// time, never a cost of 0.
func TestPostgresRefusesBadCosts(t *testing.T) {
	_, db := pgtest.Start(t)
	for _, bad := range []string{"NULL", "-1"} {
		_, err := db.Exec("DROP TABLE IF EXISTS bad; CREATE TABLE bad (ts bigint, line bigint, tokens bigint); " +
			"INSERT INTO bad VALUES (1000, 2, 5), (2000, 3, " + bad + "), (3000, 4, 1)")
		require.NoError(t, err)
		_, err = sqlcheck.Run(context.Background(), db, sqlcheck.Spec{Rules: parseRules(t, "5/1s", "90 tokens/1m"),
			Table: sqlcheck.Table{Name: "bad", TimeCol: "ts", Unit: time.Millisecond, Tiebreak: "line"}})
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "sqlcheck: bad: a send at ts = 2000 has a NULL, negative or fractional tokens (column tokens)", bad)
	}
}

// A NULL or fractional time or cost is an error, as check refuses such a
// line, never a send the query drops or rounds: in every form of the
// query.
func TestPostgresRefusesNullAndFractionalValues(t *testing.T) {
	_, db := pgtest.Start(t)
	ctx := context.Background()
	cases := []struct {
		name, table, rules, want string
		unit                     time.Duration
	}{
		{"NULL times", "CREATE TABLE v (ts bigint, line bigint, tokens bigint); INSERT INTO v VALUES (1000, 2, 1), (NULL, 3, 1), (NULL, 4, 1)",
			"5/1s", "2 sends have a NULL, negative or fractional time (column ts)", time.Millisecond},
		{"fractional times", "CREATE TABLE v (ts double precision, line bigint, tokens bigint); INSERT INTO v VALUES (0.4, 2, 1), (1.3, 3, 1)",
			"1/1s", "2 sends have a NULL, negative or fractional time (column ts)", time.Second},
		{"a fractional time", "CREATE TABLE v (ts numeric, line bigint, tokens bigint); INSERT INTO v VALUES (1000, 2, 1), (1000.5, 3, 1)",
			"5/1s", "1 send has a NULL, negative or fractional time (column ts)", time.Millisecond},
		{"a negative time", "CREATE TABLE v (ts bigint, line bigint, tokens bigint); INSERT INTO v VALUES (-9000000000000000000, 2, 1), (9000000000000000000, 3, 1)",
			"5/1s", "1 send has a NULL, negative or fractional time (column ts)", time.Nanosecond},
		{"fractional costs", "CREATE TABLE v (ts bigint, line bigint, tokens numeric); INSERT INTO v VALUES (1000, 2, 6.4), (1100, 3, 4.4)",
			"10 tokens/1s", "a send at ts = 1000 has a NULL, negative or fractional tokens (column tokens)", time.Millisecond},
	}
	for _, c := range cases {
		_, err := db.Exec("DROP TABLE IF EXISTS v; " + c.table)
		require.NoError(t, err)
		for _, form := range []sqlcheck.Spec{{}, {CountsOnly: true}, {MaxWindow: true}} {
			for _, key := range []string{"", "line"} {
				spec := form
				spec.Rules = parseRules(t, c.rules)
				spec.Table = sqlcheck.Table{Name: "v", TimeCol: "ts", Unit: c.unit, Tiebreak: "line", KeyCol: key}
				_, err := sqlcheck.Run(ctx, db, spec)
				what := fmt.Sprintf("%s, counts only %v, max window %v, key %q", c.name, form.CountsOnly, form.MaxWindow, key)
				require.Error(t, err, what)
				if key != "" && c.name == "fractional costs" {
					continue // the message names the key
				}
				assert.Contains(t, err.Error(), c.want, what)
			}
		}
	}
}

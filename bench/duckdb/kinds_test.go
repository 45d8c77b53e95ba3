package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// costRows is a log in line order as CSV (ts, key, line, tokens), times in
// unit, with ties, gaps of exactly one window and one unit less, sends on
// fixed windows' edges and costs of 0, limit and limit+1, from a minute
// before midnight in New York; and the same log as check reads it, times
// in ns.
func costRows(rng *rand.Rand, n int, w time.Duration, unit time.Duration, limit int64) (table, log string) {
	var tb, lg strings.Builder
	tb.WriteString("ts,key,line,tokens\n")
	lg.WriteString("ts,key,tokens\n")
	step := int64(w / unit)
	at := time.Date(2026, 11, 1, 3, 59, 0, 0, time.UTC).UnixNano() / int64(unit)
	for i := range n {
		switch rng.IntN(7) {
		case 0:
		case 1:
			at += step
		case 2:
			at += step - 1
		case 3:
			at += step - at%step
		default:
			at += rng.Int64N(step/3 + 1)
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
		key := fmt.Sprintf("k%d", rng.IntN(3))
		fmt.Fprintf(&tb, "%d,%s,%d,%d\n", at, key, i+2, cost)
		fmt.Fprintf(&lg, "%d,%s,%d\n", at*int64(unit), key, cost)
	}
	return tb.String(), lg.String()
}

// The generated query judges cost rules on sliding windows and fixed
// rules (an offset, a day in a time zone) in DuckDB as check does.
func TestGeneratedMatchesCheckCostsAndFixed(t *testing.T) {
	ctx := context.Background()
	texts := []string{"10 tokens/1s", "3/1s", "3/1s fixed", "25 tokens/3s fixed at 500ms", "12 tokens/1.0005s",
		"300/1d fixed at 00:00 America/New_York", "700 tokens/1d fixed at 00:00 America/New_York"}
	var rules []rule.Rule
	for _, s := range texts {
		r, err := rule.Parse(s)
		require.NoError(t, err)
		rules = append(rules, r)
	}
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 29))
		unit := []time.Duration{time.Nanosecond, time.Millisecond}[seed%2]
		table, log := costRows(rng, 1200, time.Second, unit, 10)
		path := filepath.Join(t.TempDir(), "sends.csv")
		require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
		b, err := Open(ctx, 1)
		require.NoError(t, err)
		_, err = b.conn.ExecContext(ctx, `CREATE TABLE c AS SELECT * FROM read_csv(?, header = true,
			columns = {'ts': 'BIGINT', 'key': 'VARCHAR', 'line': 'BIGINT', 'tokens': 'BIGINT'})`, path)
		require.NoError(t, err)
		boundary := rule.HalfOpen
		if seed/2 == 1 {
			boundary = rule.Closed
		}
		keyed := seed != 1
		spec := sqlcheck.Spec{Rules: rules, Boundary: boundary, MaxWindow: true,
			Table: sqlcheck.Table{Name: "c", TimeCol: "ts", Unit: unit, Tiebreak: "line"}}
		read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos,
			Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}}
		if keyed {
			spec.Table.KeyCol, read.KeyCol = "key", "key"
		}
		got, err := sqlcheck.Run(ctx, b.conn, spec)
		require.NoError(t, err, "seed %d", seed)
		spec.MaxWindow, spec.CountsOnly = false, true
		counts, err := sqlcheck.Run(ctx, b.conn, spec)
		require.NoError(t, err, "seed %d", seed)
		b.Close()
		want, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: bytes.NewReader([]byte(log))}},
			logcheck.Config{Rules: rules, Boundary: boundary, Read: read})
		require.NoError(t, err)
		name := fmt.Sprintf("seed %d, unit %v, %s, keyed %v", seed, unit, boundary, keyed)
		assert.Equal(t, verdict(t, want), verdict(t, got), name)
		for g, grp := range want.Groups {
			for r, rr := range grp.Report.Rules {
				assert.Equal(t, rr.Violations, counts.Groups[g].Report.Rules[r].Violations, "%s, counts only, rule %s", name, rr.Rule)
			}
		}
	}
}

// DuckDB's / divides integers as floats: near 1.7e18 ns two sends 100 ns
// apart fell in one window of 1/100ns fixed, a violation PostgreSQL and
// check do not find. The query divides no window index, and a zone's
// seconds stay exact at midnight.
func TestGeneratedDividesNoIntegers(t *testing.T) {
	ctx := context.Background()
	midnight := time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC).UnixNano() // 00:00 in New York
	for _, c := range []struct {
		rule string
		at   []int64
		want int64
	}{
		{"1/100ns fixed", []int64{1_700_000_000_000_000_000, 1_700_000_000_000_000_100}, 0},
		{"1/100ns fixed", []int64{1_700_000_000_000_000_000, 1_700_000_000_000_000_099}, 1},
		{"1/1d fixed at 00:00 America/New_York", []int64{midnight - 1, midnight}, 0},
		{"1/1d fixed at 00:00 America/New_York", []int64{midnight, midnight + int64(24*time.Hour) - 1}, 1},
	} {
		b, err := Open(ctx, 1)
		require.NoError(t, err)
		var rows []string
		for i, at := range c.at {
			rows = append(rows, fmt.Sprintf("(%d, %d)", at, i+2))
		}
		_, err = b.conn.ExecContext(ctx, "CREATE TABLE d (ts BIGINT, line BIGINT); INSERT INTO d VALUES "+strings.Join(rows, ", "))
		require.NoError(t, err)
		r, err := rule.Parse(c.rule)
		require.NoError(t, err)
		res, err := sqlcheck.Run(ctx, b.conn, sqlcheck.Spec{Rules: []rule.Rule{r},
			Table: sqlcheck.Table{Name: "d", TimeCol: "ts", Unit: time.Nanosecond, Tiebreak: "line"}})
		b.Close()
		require.NoError(t, err, c.rule)
		assert.Equal(t, c.want, res.Violations(), "%s on %v", c.rule, c.at)
	}
}

// A NULL or fractional time or cost is an error in DuckDB too, never a
// send dropped or rounded.
func TestGeneratedRefusesNullAndFractionalValues(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		table, rules, want string
		unit               time.Duration
	}{
		{"CREATE TABLE v (ts BIGINT, line BIGINT, tokens BIGINT); INSERT INTO v VALUES (1000, 2, 1), (NULL, 3, 1), (NULL, 4, 1)",
			"5/1s", "2 sends have a NULL, negative or fractional time (column ts)", time.Millisecond},
		{"CREATE TABLE v (ts DOUBLE, line BIGINT, tokens BIGINT); INSERT INTO v VALUES (0.4, 2, 1), (1.3, 3, 1)",
			"1/1s", "2 sends have a NULL, negative or fractional time (column ts)", time.Second},
		{"CREATE TABLE v (ts BIGINT, line BIGINT, tokens DECIMAL(10, 1)); INSERT INTO v VALUES (1000, 2, 6.4), (1100, 3, 4.4)",
			"10 tokens/1s", "a send at ts = 1000 has a NULL, negative or fractional tokens (column tokens)", time.Millisecond},
	} {
		for _, countsOnly := range []bool{false, true} {
			b, err := Open(ctx, 1)
			require.NoError(t, err)
			_, err = b.conn.ExecContext(ctx, c.table)
			require.NoError(t, err)
			rules, err := rule.ParseList(c.rules)
			require.NoError(t, err)
			_, err = sqlcheck.Run(ctx, b.conn, sqlcheck.Spec{Rules: rules, CountsOnly: countsOnly,
				Table: sqlcheck.Table{Name: "v", TimeCol: "ts", Unit: c.unit, Tiebreak: "line"}})
			b.Close()
			require.Error(t, err, c.table)
			assert.Contains(t, err.Error(), c.want)
		}
	}
}

package sqlcheck_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/internal/pgtest"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/sqlcheck"
)

// send is one row: a time in the table's unit, a key, and its line in the
// CSV that check reads (the tiebreak).
type send struct {
	t    int64
	key  string
	line int64
}

// load creates table name holding sends.
func load(t *testing.T, db *sql.DB, name string, sends []send) {
	t.Helper()
	_, err := db.Exec(fmt.Sprintf("DROP TABLE IF EXISTS %s; CREATE TABLE %s (ts bigint, tenant text, line bigint)", name, name))
	require.NoError(t, err)
	for lo := 0; lo < len(sends); lo += 500 {
		var vals []string
		for _, s := range sends[lo:min(lo+500, len(sends))] {
			vals = append(vals, fmt.Sprintf("(%d, '%s', %d)", s.t, s.key, s.line))
		}
		_, err := db.Exec(fmt.Sprintf("INSERT INTO %s VALUES %s", name, strings.Join(vals, ",")))
		require.NoError(t, err)
	}
}

// checkCSV runs logcheck on the same sends written as a CSV, times in ns.
func checkCSV(t *testing.T, sends []send, unit time.Duration, rules []rule.Rule, b rule.Boundary, keyed bool) *report.Result {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("ts,tenant\n")
	for _, s := range sends {
		fmt.Fprintf(&buf, "%d,%s\n", s.t*int64(unit), s.key)
	}
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}
	if keyed {
		read.KeyCol = "tenant"
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: &buf}},
		logcheck.Config{Rules: rules, Boundary: b, Read: read, Sort: true})
	require.NoError(t, err)
	return res
}

// verdict is the JSON report without the parts that describe the input.
func verdict(t *testing.T, res *report.Result) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
	delete(doc, "files")
	return doc
}

// withoutMax drops the largest window (and its usage) and what says it
// was not checked.
func withoutMax(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	delete(doc, "not_checked")
	var rules []any
	keys, _ := doc["keys"].([]any)
	for _, k := range keys {
		rules = append(rules, k.(map[string]any)["rules"].([]any)...)
	}
	for _, r := range append(rules, doc["rules"].([]any)...) {
		r := r.(map[string]any)
		delete(r, "max_in_window")
		delete(r, "max_window_start")
		delete(r, "usage") // the share of the limit the largest window holds
	}
	return doc
}

// randomSends mixes ties, gaps of exactly the window and one unit less,
// over a few keys, in shuffled row order.
func randomSends(rng *rand.Rand, n int, w, perSecond int64, keys int) []send {
	sends := make([]send, n)
	at := 1_767_225_600*perSecond + rng.Int64N(1000)
	for i := range sends {
		switch rng.IntN(6) {
		case 0: // a tie
		case 1:
			at += w
		case 2:
			at += w - 1
		default:
			at += rng.Int64N(w/3 + 1)
		}
		sends[i] = send{t: at, key: fmt.Sprintf("k%d", rng.IntN(keys)), line: int64(i) + 2}
	}
	return sends
}

func TestPostgresMatchesCheck(t *testing.T) {
	_, db := pgtest.Start(t)
	ctx := context.Background()
	units := []time.Duration{time.Millisecond, time.Microsecond, time.Nanosecond, time.Second}
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 11))
		unit := units[seed%4]
		b := rule.HalfOpen
		if seed%3 == 2 {
			b = rule.Closed
		}
		keyed := seed%2 == 0
		// Windows in whole units, and one that is not (1500 µs in ms).
		base := time.Duration(1+rng.IntN(5)) * 1000 * unit
		rules := []rule.Rule{
			{Limit: 1, Window: base},
			{Limit: 3, Window: base},
			{Limit: 5, Window: 3 * base},
			{Limit: 2, Window: base + unit/2 + 1},
			{Limit: 400, Window: 100 * base}, // beyond every key's sends
		}
		sends := randomSends(rng, 300+rng.IntN(400), int64(base/unit), int64(time.Second/unit), 1+2*int(seed%2))
		if keyed {
			// A key that breaks no rule.
			sends = append(sends, send{t: sends[len(sends)-1].t, key: "quiet", line: int64(len(sends)) + 2})
		}
		load(t, db, "sends", sends)
		name := fmt.Sprintf("seed %d, unit %v, %s, keyed %v", seed, unit, b, keyed)
		spec := sqlcheck.Spec{Rules: rules, Boundary: b, Table: sqlcheck.Table{
			Name: "sends", TimeCol: "ts", Unit: unit, Tiebreak: "line"}}
		if keyed {
			spec.Table.KeyCol = "tenant"
		}
		spec.MaxWindow = true
		got, err := sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		want := checkCSV(t, sends, unit, rules, b, keyed)
		assert.Equal(t, verdict(t, want), verdict(t, got), name)
		assert.Equal(t, want.Violations(), got.Violations(), name)
		// Without the largest window, every other column is the same.
		spec.MaxWindow = false
		got, err = sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		assert.Equal(t, withoutMax(t, verdict(t, want)), withoutMax(t, verdict(t, got)), name)
		spec.CountsOnly = true
		_, err = sqlcheck.Compile(sqlcheck.Spec{Rules: rules, Table: spec.Table, CountsOnly: true, MaxWindow: true})
		require.Error(t, err, "counts only with the largest window")
		counts, err := sqlcheck.Run(ctx, db, spec)
		require.NoError(t, err, name)
		require.Len(t, counts.Groups, len(want.Groups), name)
		for g := range want.Groups {
			assert.Equal(t, want.Groups[g].Key, counts.Groups[g].Key, name)
			assert.Equal(t, want.Groups[g].Report.Sends, counts.Groups[g].Report.Sends, name)
			for r, rr := range want.Groups[g].Report.Rules {
				assert.Equal(t, rr.Violations, counts.Groups[g].Report.Rules[r].Violations, "%s, counts only, key %s, rule %s", name, want.Groups[g].Key, rr.Rule)
			}
		}
	}
}

func TestPostgresFixtures(t *testing.T) {
	_, db := pgtest.Start(t)
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}
	for name, want := range map[string][]int64{
		"asyncio-sequential.txt": {2, 0},
		"asyncio-combined.txt":   {0, 0},
	} {
		var sends []send
		for i, ns := range fixtures.MustTimes(t, name) {
			sends = append(sends, send{t: ns / 1000, line: int64(i) + 1})
		}
		load(t, db, "fixture", sends)
		res, err := sqlcheck.Run(context.Background(), db, sqlcheck.Spec{Rules: rules, Table: sqlcheck.Table{
			Name: "fixture", TimeCol: "ts", Unit: time.Microsecond, Tiebreak: "line"}})
		require.NoError(t, err, name)
		var got []int64
		for _, r := range res.Groups[0].Report.Rules {
			got = append(got, r.Violations)
		}
		assert.Equal(t, want, got, name)
	}
}

package sqlcheck

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Table says where the sends are: one row a send.
type Table struct {
	// Name is the table (or view), optionally schema-qualified: "sends",
	// "public.sends".
	Name string
	// TimeCol is an integer column holding each send's time in Unit.
	TimeCol string
	// Unit is what one step of TimeCol means: time.Second, Millisecond,
	// Microsecond or Nanosecond.
	Unit time.Duration
	// KeyCol, when set, checks the rules per key; NULL counts as "".
	KeyCol string
	// Tiebreak, when set, is an integer column that orders sends at one
	// instant (a line number, an id) and is reported as each send's line.
	// Without it, sends at one instant are taken in the engine's order and
	// a send's line is its 1-based position in its key's time order; the
	// counts and times do not depend on that order.
	Tiebreak string
}

// Spec is what to check.
type Spec struct {
	Table    Table
	Rules    []rule.Rule
	Boundary rule.Boundary
	// CountsOnly leaves out the largest count in one window and the first
	// violation: one sort, as fast as a hand-written count (docs/sql.md).
	CountsOnly bool
}

// Columns are the query's result columns, one row per key and rule, in
// order. Times are in the table's unit; a missing violation is NULL.
var Columns = []string{
	"key", "rule_index", "rule", "sends", "first_t", "last_t",
	"violations", "first_index", "first_t_violation", "first_ref",
	"first_window_index", "first_window_t", "first_window_ref",
	"max_in_window", "max_window_t", "max_window_ref",
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// ident quotes each dotted part of name unless it is a plain lower-case
// identifier, which both engines take as written.
func ident(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty name")
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if p == "" || strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("name %q: empty part or NUL", name)
		}
		if !plainIdent.MatchString(p) {
			parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
		}
	}
	return strings.Join(parts, "."), nil
}

// Reach returns K for a rule: send j lies in send i's window exactly when
// t_i - t_j <= K, times being integers in unit.
func Reach(w time.Duration, unit time.Duration, b rule.Boundary) int64 {
	if b == rule.Closed {
		return int64(w / unit)
	}
	return int64((w+unit-1)/unit) - 1
}

// Compile returns the query that checks spec, for PostgreSQL and DuckDB
// alike.
func Compile(spec Spec) (string, error) {
	t := spec.Table
	switch t.Unit {
	case time.Second, time.Millisecond, time.Microsecond, time.Nanosecond:
	default:
		return "", fmt.Errorf("sqlcheck: time unit %v: want 1s, 1ms, 1µs or 1ns", t.Unit)
	}
	if len(spec.Rules) == 0 {
		return "", errors.New("sqlcheck: no rules")
	}
	table, err := ident(t.Name)
	if err != nil {
		return "", fmt.Errorf("sqlcheck: --table: %w", err)
	}
	timeCol, err := ident(t.TimeCol)
	if err != nil {
		return "", fmt.Errorf("sqlcheck: --time-col: %w", err)
	}
	key := "CAST('' AS VARCHAR)"
	part := ""
	if t.KeyCol != "" {
		k, err := ident(t.KeyCol)
		if err != nil {
			return "", fmt.Errorf("sqlcheck: --key-col: %w", err)
		}
		key = fmt.Sprintf("COALESCE(CAST(%s AS VARCHAR), '')", k)
		part = "PARTITION BY k "
	}
	tb, order, ref := "", "t", "row_number() OVER (%sORDER BY t)"
	if t.Tiebreak != "" {
		c, err := ident(t.Tiebreak)
		if err != nil {
			return "", fmt.Errorf("sqlcheck: --tiebreak: %w", err)
		}
		tb, order, ref = fmt.Sprintf(", CAST(%s AS BIGINT) AS tb", c), "t, tb", "tb"
	} else {
		ref = fmt.Sprintf(ref, part)
	}
	// One range count per distinct reach, shared by the rules that have it.
	reach := make([]int64, len(spec.Rules))
	var reaches []int64
	for i, r := range spec.Rules {
		if r.Limit <= 0 || r.Window <= 0 {
			return "", fmt.Errorf("sqlcheck: rule %s: limit and window must be positive", r)
		}
		reach[i] = Reach(r.Window, t.Unit, spec.Boundary)
		if !slices.Contains(reaches, reach[i]) {
			reaches = append(reaches, reach[i])
		}
	}
	kof := func(i int) int { return slices.Index(reaches, reach[i]) }

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("-- rlcheck: %d rules, %s windows, times in %s, integer arithmetic.\n", len(spec.Rules), spec.Boundary, unitName(t.Unit))
	for i, r := range spec.Rules {
		w("-- rule %d: %s: send i breaks it when t_i - t_{i-%d} <= %d.\n", i, r, r.Limit, reach[i])
	}
	// Counting alone over one stream carries nothing but the times through
	// the sort.
	lean := spec.CountsOnly && t.KeyCol == ""
	kcol, mat := "k, ", " MATERIALIZED"
	if lean {
		kcol = ""
	}
	if spec.CountsOnly {
		mat = ""
	}
	w("WITH src AS (\n  SELECT %sCAST(%s AS BIGINT) AS t%s\n  FROM %s\n),\n", strings.Replace(kcol, "k", key+" AS k", 1), timeCol, tb, table)
	// s: each send's position, the sends up to its instant, and whether it
	// breaks each rule (its N-th predecessor is within reach).
	// MATERIALIZED: the steps read more than once are computed once (the
	// default in PostgreSQL; DuckDB may otherwise compute them again).
	w("s AS%s (\n  SELECT %st", mat, kcol)
	if !spec.CountsOnly {
		w(", %s AS ref,\n", ref)
		w("    row_number() OVER (%sORDER BY %s) - 1 AS i,\n", part, order)
		w("    count(*) OVER (%sORDER BY t) AS cum", part)
	}
	for i, r := range spec.Rules {
		w(",\n    CASE WHEN t - lag(t, %d) OVER (%sORDER BY %s) <= %d THEN 1 END AS v%d", r.Limit, part, order, reach[i], i)
	}
	w("\n  FROM src\n),\n")
	if spec.CountsOnly {
		countsOnly(w, spec.Rules, t.KeyCol != "")
		return b.String(), nil
	}
	// p<j>: for each reach K, each send's window start lo, the number of
	// sends before t-K, counted by sorting a probe (d NULL) at t-K among
	// the sends (probes first at one instant): one sort, where DuckDB's
	// range-framed count took ten times as long. The window holds cum-lo
	// sends.
	for j, k := range reaches {
		var vs, nulls []string
		for i := range spec.Rules {
			if kof(i) == j {
				vs = append(vs, fmt.Sprintf("v%d", i))
				nulls = append(nulls, "NULL")
			}
		}
		w("p%d AS MATERIALIZED (\n  SELECT k, i, cum - lo AS c, lo, %s FROM (\n", j, strings.Join(vs, ", "))
		w("    SELECT k, i, cum, %s, d,\n", strings.Join(vs, ", "))
		w("      count(d) OVER (%sORDER BY pt, d NULLS FIRST ROWS UNBOUNDED PRECEDING) AS lo\n", part)
		w("    FROM (\n      SELECT k, t - %d AS pt, CAST(NULL AS INTEGER) AS d, i, cum, %s FROM s\n", k, strings.Join(vs, ", "))
		w("      UNION ALL\n      SELECT k, t, 1, NULL, NULL, %s FROM src\n    ) u\n  ) q WHERE d IS NULL\n),\n", strings.Join(nulls, ", "))
	}
	// a<j>: per key. Window starts only move forward, so the first
	// violation's start is the least start among violations; the first
	// fullest window is the one with the least start among the fullest.
	for j := range reaches {
		w("a%d AS (\n  SELECT k, max(c) AS mx", j)
		for i := range spec.Rules {
			if kof(i) == j {
				w(",\n    count(v%d) AS n%d, min(CASE WHEN v%d = 1 THEN i END) AS fi%d, min(CASE WHEN v%d = 1 THEN lo END) AS fs%d", i, i, i, i, i, i)
			}
		}
		w("\n  FROM p%d GROUP BY k\n),\n", j)
		w("m%d AS (\n  SELECT p%d.k, min(p%d.lo) AS ms FROM p%d JOIN a%d ON p%d.k = a%d.k AND p%d.c = a%d.mx GROUP BY p%d.k\n),\n", j, j, j, j, j, j, j, j, j, j)
	}
	w("a AS (\n  SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t FROM src GROUP BY k\n),\n")
	// want and d: the few sends the report names, fetched in one pass.
	w("want AS (\n")
	var sel []string
	for i := range spec.Rules {
		sel = append(sel, fmt.Sprintf("  SELECT k, fi%d AS i FROM a%d", i, kof(i)), fmt.Sprintf("  SELECT k, fs%d FROM a%d", i, kof(i)))
	}
	for j := range reaches {
		sel = append(sel, fmt.Sprintf("  SELECT k, ms FROM m%d", j))
	}
	w("%s\n),\n", strings.Join(sel, "\n  UNION\n"))
	w("d AS (\n  SELECT s.k, s.i, s.t, s.ref FROM s JOIN want ON s.k = want.k AND s.i = want.i\n)\n")
	for i, r := range spec.Rules {
		if i > 0 {
			w("UNION ALL\n")
		}
		j := kof(i)
		cols := []string{
			"a.k", fmt.Sprint(i), fmt.Sprintf("'%s'", r), "a.sends", "a.first_t", "a.last_t",
			fmt.Sprintf("r.n%d", i), fmt.Sprintf("r.fi%d", i), "f.t", "f.ref",
			fmt.Sprintf("r.fs%d", i), "fs.t", "fs.ref",
			"r.mx", "ms.t", "ms.ref",
		}
		if i == 0 {
			for c := range cols {
				cols[c] += " AS " + Columns[c]
			}
		}
		w("SELECT %s\nFROM a\n", strings.Join(cols, ", "))
		w("  JOIN a%d r ON r.k = a.k\n  JOIN m%d m ON m.k = a.k\n", j, j)
		w("  LEFT JOIN d f ON f.k = a.k AND f.i = r.fi%d\n", i)
		w("  LEFT JOIN d fs ON fs.k = a.k AND fs.i = r.fs%d\n", i)
		w("  LEFT JOIN d ms ON ms.k = a.k AND ms.i = m.ms\n")
	}
	w("ORDER BY 1, 2;\n")
	return b.String(), nil
}

// countsOnly ends the query with the violation counts alone, the other
// columns NULL.
func countsOnly(w func(string, ...any), rules []rule.Rule, keyed bool) {
	key := "k"
	if !keyed {
		key = "CAST('' AS VARCHAR) AS k"
	}
	w("a AS MATERIALIZED (\n  SELECT %s, count(*) AS sends, min(t) AS first_t, max(t) AS last_t", key)
	for i := range rules {
		w(", count(v%d) AS n%d", i, i)
	}
	if keyed {
		w("\n  FROM s GROUP BY k\n)\n")
	} else {
		// One group: no grouping, and no row for an empty table.
		w("\n  FROM s HAVING count(*) > 0\n)\n")
	}
	for i, r := range rules {
		if i > 0 {
			w("UNION ALL\n")
		}
		cols := []string{"k", fmt.Sprint(i), fmt.Sprintf("'%s'", r), "sends", "first_t", "last_t", fmt.Sprintf("n%d", i)}
		for range len(Columns) - len(cols) {
			cols = append(cols, "CAST(NULL AS BIGINT)")
		}
		if i == 0 {
			for c := range cols {
				cols[c] += " AS " + Columns[c]
			}
		}
		w("SELECT %s FROM a\n", strings.Join(cols, ", "))
	}
	w("ORDER BY 1, 2;\n")
}

func unitName(u time.Duration) string {
	switch u {
	case time.Second:
		return "s"
	case time.Millisecond:
		return "ms"
	case time.Microsecond:
		return "us"
	}
	return "ns"
}

// ParseUnit reads s, ms, us or ns.
func ParseUnit(s string) (time.Duration, error) {
	switch s {
	case "s":
		return time.Second, nil
	case "ms":
		return time.Millisecond, nil
	case "us", "µs":
		return time.Microsecond, nil
	case "ns":
		return time.Nanosecond, nil
	}
	return 0, fmt.Errorf("time unit %q: want s, ms, us or ns", s)
}

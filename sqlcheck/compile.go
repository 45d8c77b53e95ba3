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
	w("WITH src AS (\n  SELECT %s AS k, CAST(%s AS BIGINT) AS t%s\n  FROM %s\n),\n", key, timeCol, tb, table)
	// s: each send's position, the gaps to its N-th predecessors, and the
	// sends in each range-framed window ending at its instant.
	w("s AS (\n  SELECT k, t, %s AS ref,\n", ref)
	w("    row_number() OVER (%sORDER BY %s) - 1 AS i,\n", part, order)
	w("    count(*) OVER (%sORDER BY t) AS cum", part)
	for i, r := range spec.Rules {
		w(",\n    t - lag(t, %d) OVER (%sORDER BY %s) AS d%d", r.Limit, part, order, i)
	}
	for j, k := range reaches {
		w(",\n    count(*) OVER (%sORDER BY t RANGE BETWEEN %d PRECEDING AND CURRENT ROW) AS c%d", part, k, j)
	}
	w("\n  FROM src\n),\n")
	// s2: violations, window starts (the oldest send of the frame) and the
	// sends that raise the largest count so far.
	w("s2 AS (\n  SELECT k, t, ref, i")
	for i := range spec.Rules {
		w(",\n    CASE WHEN d%d <= %d THEN 1 ELSE 0 END AS v%d", i, reach[i], i)
	}
	for j := range reaches {
		w(",\n    c%d, cum - c%d AS lo%d", j, j, j)
		w(",\n    CASE WHEN c%d > COALESCE(max(c%d) OVER (%sORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) THEN 1 ELSE 0 END AS up%d", j, j, part, j)
	}
	w("\n  FROM s\n),\n")
	// a: per key. Window starts only move forward, so the first
	// violation's start is the least start among violations, and the
	// fullest window's is the greatest among the sends that raised the
	// maximum.
	w("a AS (\n  SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t")
	for i := range spec.Rules {
		w(",\n    CAST(sum(v%d) AS BIGINT) AS n%d, min(CASE WHEN v%d = 1 THEN i END) AS fi%d, min(CASE WHEN v%d = 1 THEN lo%d END) AS fs%d",
			i, i, i, i, i, kof(i), i)
	}
	for j := range reaches {
		w(",\n    max(c%d) AS mx%d, max(CASE WHEN up%d = 1 THEN lo%d END) AS ms%d", j, j, j, j, j)
	}
	w("\n  FROM s2 GROUP BY k\n),\n")
	// want and d: the few sends the report names, fetched in one pass.
	w("want AS (\n")
	var sel []string
	for i := range spec.Rules {
		sel = append(sel, fmt.Sprintf("  SELECT k, fi%d AS i FROM a", i), fmt.Sprintf("  SELECT k, fs%d FROM a", i))
	}
	for j := range reaches {
		sel = append(sel, fmt.Sprintf("  SELECT k, ms%d FROM a", j))
	}
	w("%s\n),\n", strings.Join(sel, "\n  UNION\n"))
	w("d AS (\n  SELECT s2.k, s2.i, s2.t, s2.ref FROM s2 JOIN want ON s2.k = want.k AND s2.i = want.i\n)\n")
	for i, r := range spec.Rules {
		if i > 0 {
			w("UNION ALL\n")
		}
		j := kof(i)
		cols := []string{
			"a.k", fmt.Sprint(i), fmt.Sprintf("'%s'", r), "a.sends", "a.first_t", "a.last_t",
			fmt.Sprintf("a.n%d", i), fmt.Sprintf("a.fi%d", i), "f.t", "f.ref",
			fmt.Sprintf("a.fs%d", i), "fs.t", "fs.ref",
			fmt.Sprintf("a.mx%d", j), "ms.t", "ms.ref",
		}
		if i == 0 {
			for c := range cols {
				cols[c] += " AS " + Columns[c]
			}
		}
		w("SELECT %s\nFROM a\n", strings.Join(cols, ", "))
		w("  LEFT JOIN d f ON f.k = a.k AND f.i = a.fi%d\n", i)
		w("  LEFT JOIN d fs ON fs.k = a.k AND fs.i = a.fs%d\n", i)
		w("  LEFT JOIN d ms ON ms.k = a.k AND ms.i = a.ms%d\n", j)
	}
	w("ORDER BY 1, 2;\n")
	return b.String(), nil
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

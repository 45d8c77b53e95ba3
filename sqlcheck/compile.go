package sqlcheck

import (
	"errors"
	"fmt"
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
	// instant (a line number, an id) and is reported as each send's line,
	// named after the column in the text report. Without it, sends at one
	// instant are taken in the engine's order and a send's line is its
	// 1-based rank in its key's time order (shown as "#N in time order",
	// since it is no file's line); the counts and times do not depend on
	// that order.
	Tiebreak string
	// Costs names the integer column holding each send's cost in a unit
	// ("tokens": "total_tokens"); a unit it does not name is read from
	// the column named as the unit itself, as check reads a CSV.
	Costs map[string]string
}

// Spec is what to check.
type Spec struct {
	Table    Table
	Rules    []rule.Rule
	Boundary rule.Boundary
	// CountsOnly leaves out the first violations: one sort, as fast as a
	// hand-written count (docs/sql.md).
	CountsOnly bool
	// MaxWindow adds the largest count in one window, which costs one more
	// sort of the sends, with a probe per send, per distinct window width
	// (docs/sql.md).
	MaxWindow bool
}

// Columns are the query's result columns, one row per key and rule, in
// order. Times are in the table's unit; a missing violation is NULL.
// bad_times counts the table's rows whose time is NULL, negative or not a
// whole number, which check would refuse: Run then refuses the verdict.
var Columns = []string{
	"key", "rule_index", "rule", "sends", "first_t", "last_t",
	"violations", "first_index", "first_t_violation", "first_ref",
	"first_window_index", "first_window_t", "first_window_ref",
	"max_in_window", "max_window_t", "max_window_ref", "bad_times",
}

// badTimes is the bad_times column of every result row.
const badTimes = "(SELECT n FROM bt)"

// notWhole is the test, on a column's raw value, of a time or cost that
// is not a whole number: CAST to BIGINT rounds one (6.4 to 6) in both
// engines, so the value is compared with its rounding, as a decimal exact
// to 1e-9 of the unit, which also reads integer, numeric, float and text
// columns alike.
func notWhole(col string) string {
	return fmt.Sprintf("CAST(%s AS DECIMAL(38, 9)) <> CAST(%s AS BIGINT)", col, col)
}

// badTimesCTE counts, in one scan without a sort, the rows whose time
// is NULL, negative or not a whole number: check refuses each.
func badTimesCTE(timeCol, table string) string {
	return fmt.Sprintf("bt AS MATERIALIZED (\n  SELECT count(*) FILTER (WHERE %s IS NULL OR %s < 0 OR %s) AS n\n  FROM %s\n)", timeCol, timeCol, notWhole(timeCol), table)
}

// ident quotes each dotted part of name, always: a plain name such as
// user or order is a reserved word in one engine or another (PostgreSQL
// reads a bare user as current_user), and quoting leaves every other name
// as it is written, its case included. Quotes inside are doubled.
func ident(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty name")
	}
	parts := strings.Split(name, ".")
	for i, p := range parts {
		if p == "" || strings.ContainsRune(p, 0) {
			return "", fmt.Errorf("name %q: empty part or NUL", name)
		}
		parts[i] = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
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
	if spec.CountsOnly && spec.MaxWindow {
		return "", errors.New("sqlcheck: sqlcheck.Spec.CountsOnly leaves out the largest count in one window that sqlcheck.Spec.MaxWindow asks for")
	}
	table, err := ident(t.Name)
	if err != nil {
		return "", fmt.Errorf("sqlcheck: sqlcheck.Table.Name: %w", err)
	}
	timeCol, err := ident(t.TimeCol)
	if err != nil {
		return "", fmt.Errorf("sqlcheck: sqlcheck.Table.TimeCol: %w", err)
	}
	q := query{keyed: t.KeyCol != ""}
	key := "CAST('' AS VARCHAR)"
	if q.keyed {
		k, err := ident(t.KeyCol)
		if err != nil {
			return "", fmt.Errorf("sqlcheck: sqlcheck.Table.KeyCol: %w", err)
		}
		key = fmt.Sprintf("COALESCE(CAST(%s AS VARCHAR), '')", k)
	}
	tb := ""
	if t.Tiebreak != "" {
		c, err := ident(t.Tiebreak)
		if err != nil {
			return "", fmt.Errorf("sqlcheck: sqlcheck.Table.Tiebreak: %w", err)
		}
		tb = fmt.Sprintf(", CAST(%s AS BIGINT) AS tb", c)
		q.tiebreak = true
	}
	slow, err := q.plan(spec)
	if err != nil {
		return "", err
	}
	w := q.w
	q.bt = badTimesCTE(timeCol, table)
	if len(slow.idx) > 0 {
		if err := slow.write(key, timeCol, table); err != nil {
			return "", err
		}
		q.slow = slow
		if len(q.rules) == 0 {
			w("WITH %s,\n%s\n%sORDER BY 1, 2;\n", strings.Join(slow.ctes, ",\n"), q.bt, strings.Join(slow.sels, "UNION ALL\n"))
			return q.b.String(), nil
		}
	}
	if spec.CountsOnly {
		// Counting alone over one stream carries nothing but the times
		// through the sort.
		lean := !q.keyed
		kcol := "k, "
		if lean {
			kcol = ""
		}
		w("WITH src AS (\n  SELECT %sCAST(%s AS BIGINT) AS t\n  FROM %s\n),\n", strings.Replace(kcol, "k", key+" AS k", 1), timeCol, table)
		w("s AS (\n  SELECT %st", kcol)
		for i, r := range q.rules {
			w(",\n    lag(t, %d) OVER (%sORDER BY t) AS l%d", r.Limit, q.part(), i)
		}
		w("\n  FROM src\n),\n")
		q.countsOnly()
		return q.b.String(), nil
	}
	q.full(key, timeCol, table, tb)
	return q.b.String(), nil
}

// plan splits the rules: the sliding call rules take the lag test, one
// count per distinct reach shared by the rules that have it; the others
// are slow. It writes the query's header, a line per rule.
func (q *query) plan(spec Spec) (*slowRules, error) {
	t := spec.Table
	reach := make([]int64, len(spec.Rules))
	for i, r := range spec.Rules {
		if r.Limit <= 0 || r.Window <= 0 {
			return nil, fmt.Errorf("sqlcheck: rule %s: limit and window must be positive", r)
		}
		if err := r.Validate(); err != nil {
			return nil, fmt.Errorf("sqlcheck: rule %s: %v", r, err)
		}
		reach[i] = Reach(r.Window, t.Unit, spec.Boundary)
		if !r.SlidingCalls() {
			continue
		}
		q.rules, q.index, q.reach = append(q.rules, r), append(q.index, i), append(q.reach, reach[i])
		if !slices.Contains(q.reaches, reach[i]) {
			q.reaches = append(q.reaches, reach[i])
		}
	}
	if !spec.MaxWindow {
		q.reaches = nil
	}
	slow, err := newSlowRules(spec)
	if err != nil {
		return nil, err
	}
	q.w("-- rlcheck: %d rules, %s windows, times in %s, integer arithmetic.\n", len(spec.Rules), spec.Boundary, unitName(t.Unit))
	for i, r := range spec.Rules {
		if !r.SlidingCalls() {
			q.w("%s", slow.comment(i, reach[i]))
			continue
		}
		q.w("-- rule %d: %s: send i breaks it when t_{i-%d} >= t_i - %d.\n", i, r, r.Limit, reach[i])
	}
	return slow, nil
}

// query writes the full report's text.
type query struct {
	b        strings.Builder
	keyed    bool
	tiebreak bool
	rules    []rule.Rule // the sliding call rules
	index    []int       // their indices in Spec.Rules
	reach    []int64
	reaches  []int64 // distinct, when the largest count in one window is asked for
	slow     *slowRules
	bt       string // the CTE that counts the bad times
}

func (q *query) w(format string, args ...any) { fmt.Fprintf(&q.b, format, args...) }

// part is the window's partition, k, ...: the key's parts of the text, or
// nothing over one stream.
func (q *query) part() string {
	if q.keyed {
		return "PARTITION BY k "
	}
	return ""
}

func (q *query) k(alias string) string {
	if q.keyed {
		return alias + "k, "
	}
	return ""
}

func (q *query) groupBy(alias string) string {
	if q.keyed {
		return " GROUP BY " + alias + "k"
	}
	return ""
}

func (q *query) on(x, y string) string {
	if q.keyed {
		return fmt.Sprintf("%s.k = %s.k", x, y)
	}
	return "TRUE"
}

// breaks is rule i's test on a row of s: send t breaks it when its lag
// l<i>, the send N places earlier, lies at or after t-K. Comparing the lag
// with t-K, rather than t-lag with K, is the cheaper form in DuckDB: t less
// a constant needs no overflow check.
func breaks(i int, k int64) string {
	return fmt.Sprintf("l%d >= t - %d", i, k)
}

// full writes the query that reports every column: one sort and window pass
// decides every send (per rule, whether it breaks it), one aggregate takes
// the counts and the first violations' times, and one scan of the table, of
// the sends up to the last of those times, finds each first violation's
// index and window. The largest count in one window (MaxWindow) sorts the
// sends again with a probe per send, per window width.
func (q *query) full(key, timeCol, table, tb string) {
	w := q.w
	kk := q.k("")
	w("WITH src AS NOT MATERIALIZED (\n  SELECT %sCAST(%s AS BIGINT) AS t%s\n  FROM %s\n),\n", strings.Replace(kk, "k", key+" AS k", 1), timeCol, tb, table)
	// s: per rule, each send's lag, the send N places earlier in time
	// order. The order of sends at one instant does not change which
	// positions break a rule, so the tiebreak is left out of the sort. Only
	// the largest window needs each send's index i.
	mat, idx := "NOT MATERIALIZED", ""
	if len(q.reaches) > 0 {
		mat, idx = "MATERIALIZED", ", row_number() OVER w - 1 AS i"
	}
	w("s AS %s (\n  SELECT %st%s", mat, kk, idx)
	for i, r := range q.rules {
		w(",\n    lag(t, %d) OVER w AS l%d", r.Limit, i)
	}
	w("\n  FROM src\n  WINDOW w AS (%sORDER BY t)\n),\n", q.part())
	// a: per key, the counts, and each rule's first violation's time: the
	// least time among the sends that break it; fm, the last of those.
	ka := "CAST('' AS VARCHAR) AS k, "
	if q.keyed {
		ka = kk
	}
	var fts []string
	w("a AS MATERIALIZED (\n  SELECT *, GREATEST(")
	for i := range q.rules {
		fts = append(fts, fmt.Sprintf("ft%d", i))
	}
	w("%s) AS fm FROM (\n    SELECT %scount(*) AS sends, min(t) AS first_t, max(t) AS last_t", strings.Join(fts, ", "), ka)
	for i := range q.rules {
		f := fmt.Sprintf("FILTER (WHERE %s)", breaks(i, q.reach[i]))
		w(",\n      count(*) %s AS n%d, min(t) %s AS ft%d", f, i, f, i)
	}
	if q.keyed {
		w("\n    FROM s GROUP BY k\n  ) a0\n),\n")
	} else {
		w("\n    FROM s HAVING count(*) > 0\n  ) a0\n),\n")
	}
	// m<j>: for each reach K, each send's count c: the sends from its
	// window's oldest (index lo) to it. lo comes from sorting a probe at
	// t-K, carrying i, among the sends: the probe's row number is 1+lo+i.
	for j, k := range q.reaches {
		w("m%d AS MATERIALIZED (\n  SELECT %si, t, 2 * i + 2 - rn AS c FROM (\n", j, kk)
		w("    SELECT %si, t, d, row_number() OVER (%sORDER BY pt, d, i) AS rn FROM (\n", kk, q.part())
		w("      SELECT %st - %d AS pt, 0 AS d, i, t FROM s\n", kk, k)
		w("      UNION ALL\n      SELECT %st, 1, NULL, NULL FROM src\n    ) u\n  ) p WHERE d = 0\n),\n", kk)
		// x<j>: the largest count, and the first send whose window holds it.
		w("x%d AS MATERIALIZED (\n  SELECT %sx.mx, min(m%d.i) AS mi, min(m%d.t) AS mt\n", j, q.k("m"+fmt.Sprint(j)+"."), j, j)
		w("  FROM m%d JOIN (SELECT %smax(c) AS mx FROM m%d%s) x ON %s AND m%d.c = x.mx\n", j, kk, j, q.groupBy(""), q.on(fmt.Sprintf("m%d", j), "x"), j)
		w("  GROUP BY %sx.mx\n),\n", q.k(fmt.Sprintf("m%d.", j)))
	}
	// b: one scan for the first violations' windows: lo, the sends before
	// ft-K, and the first send at or after it, the window's oldest.
	w("b AS MATERIALIZED (\n  SELECT %s", q.k("src."))
	var cols []string
	for i := range q.rules {
		cols = append(cols, fmt.Sprintf("count(*) FILTER (WHERE t < a.ft%d - %d) AS lo%d, min(t) FILTER (WHERE t >= a.ft%d - %d) AS wt%d", i, q.reach[i], i, i, q.reach[i], i))
		if q.tiebreak {
			cols = append(cols, fmt.Sprintf("count(*) FILTER (WHERE t < a.ft%d) AS bf%d", i, i))
		}
	}
	for j, k := range q.reaches {
		cols = append(cols, fmt.Sprintf("min(t) FILTER (WHERE t >= x%d.mt - %d) AS mt%d", j, k, j))
	}
	w("%s\n  FROM src JOIN a ON ", strings.Join(cols, ",\n    "))
	// Only sends up to the last instant named matter: with no violation,
	// no row passes. A bound in the join condition alone lets DuckDB turn
	// it into a filter on the scan.
	if len(q.reaches) == 0 {
		if q.keyed {
			w("src.k = a.k AND ")
		}
		w("src.t <= a.fm%s\n),\n", q.groupBy("src."))
	} else {
		upTo := []string{"t <= a.fm"}
		w("%s", q.on("src", "a"))
		for j := range q.reaches {
			w(" JOIN x%d ON %s", j, q.on("src", fmt.Sprintf("x%d", j)))
			upTo = append(upTo, fmt.Sprintf("t <= x%d.mt", j))
		}
		w("\n  WHERE %s%s\n),\n", strings.Join(upTo, " OR "), q.groupBy("src."))
	}
	if q.tiebreak {
		q.refs()
	}
	q.end()
}

// refs writes ref, the tiebreak of the sends the report names. Spot 2r is
// rule r's first violation, the p-th of the sends at its instant in
// tiebreak order; 2r+1 its window's oldest send, 2R+j the oldest send of
// the fullest window for reach j: each the first at its instant.
func (q *query) refs() {
	w := q.w
	var spots []string
	for i := range q.rules {
		spots = append(spots,
			fmt.Sprintf("SELECT %s%d AS r, a.ft%d AS t, b.lo%d + %d - b.bf%d AS p FROM a JOIN b ON %s", q.k("a."), 2*i, i, i, q.rules[i].Limit, i, q.on("a", "b")),
			fmt.Sprintf("SELECT %s%d, wt%d, 0 FROM b", q.k("b."), 2*i+1, i))
	}
	for j := range q.reaches {
		spots = append(spots, fmt.Sprintf("SELECT %s%d, mt%d, 0 FROM b", q.k("b."), 2*len(q.rules)+j, j))
	}
	w("spot AS (\n  %s\n),\n", strings.Join(spots, "\n  UNION ALL\n  "))
	w("ref AS MATERIALIZED (\n  SELECT %sr, tb FROM (\n", q.k(""))
	w("    SELECT %sspot.r, spot.p, src.tb, row_number() OVER (PARTITION BY %sspot.r ORDER BY src.tb) - 1 AS q\n", q.k("spot."), q.k("spot."))
	on := "src.t = spot.t"
	if q.keyed {
		on = "src.k = spot.k AND " + on
	}
	w("    FROM src JOIN spot ON %s\n  ) z WHERE q = p\n)\n", on)
}

// closeWith ends the WITH list, after the slow rules' CTEs.
func (q *query) closeWith() {
	s := strings.TrimSuffix(strings.TrimSuffix(q.b.String(), ",\n"), "\n")
	q.b.Reset()
	q.b.WriteString(s)
	if q.slow != nil {
		for _, c := range q.slow.ctes {
			q.b.WriteString(",\n" + c)
		}
	}
	q.b.WriteString(",\n" + q.bt + "\n")
}

// names are the result columns' names, and nulls what a call rule's row
// gives in the slow rules' columns.
func (q *query) names() (names []string, nulls []string) {
	names = Columns
	if q.slow != nil {
		names = append(slices.Clone(Columns), CostColumns...)
		for range CostColumns {
			nulls = append(nulls, "CAST(NULL AS BIGINT)")
		}
	}
	return names, nulls
}

// rows ends the query with the slow rules' rows and the order.
func (q *query) rowsEnd() {
	if q.slow != nil {
		for _, s := range q.slow.sels {
			q.w("UNION ALL\n%s", s)
		}
	}
	q.w("ORDER BY 1, 2;\n")
}

// end writes the result rows: one per key and rule.
func (q *query) end() {
	w := q.w
	q.closeWith()
	names, nulls := q.names()
	for i, r := range q.rules {
		if i > 0 {
			w("UNION ALL\n")
		}
		// The first violation is send lo+N: the first whose N-th
		// predecessor is at or after ft-K (docs/sql.md). b has a row for a
		// key when any rule is broken there: rule i's columns count only
		// when it is.
		fi := fmt.Sprintf("CASE WHEN a.ft%d IS NOT NULL THEN b.lo%d + %d END", i, i, r.Limit)
		fref, wref, mref := fi+" + 1", fmt.Sprintf("b.lo%d + 1", i), ""
		if q.tiebreak {
			fref, wref, mref = "f.tb", "g.tb", "h.tb"
		}
		mx, mt := "CAST(NULL AS BIGINT)", "CAST(NULL AS BIGINT)"
		j := -1
		if len(q.reaches) > 0 {
			j = slices.Index(q.reaches, q.reach[i])
			mx, mt = fmt.Sprintf("x%d.mx", j), fmt.Sprintf("b.mt%d", j)
			if !q.tiebreak {
				mref = fmt.Sprintf("x%d.mi + 2 - x%d.mx", j, j)
			}
		} else {
			mref = "CAST(NULL AS BIGINT)"
		}
		cols := []string{
			"a.k", fmt.Sprint(q.index[i]), fmt.Sprintf("'%s'", r), "a.sends", "a.first_t", "a.last_t",
			fmt.Sprintf("a.n%d", i), fi, fmt.Sprintf("a.ft%d", i), fref,
			fmt.Sprintf("CASE WHEN a.ft%d IS NOT NULL THEN b.lo%d END", i, i), fmt.Sprintf("b.wt%d", i), wref,
			mx, mt, mref, badTimes,
		}
		cols = append(cols, nulls...)
		if i == 0 {
			for c := range cols {
				cols[c] += " AS " + names[c]
			}
		}
		w("SELECT %s\nFROM a LEFT JOIN b ON %s", strings.Join(cols, ", "), q.on("a", "b"))
		if j >= 0 {
			w(" JOIN x%d ON %s", j, q.on("a", fmt.Sprintf("x%d", j)))
		}
		if q.tiebreak {
			ref := func(alias string, spot int) {
				on := ""
				if q.keyed {
					on = alias + ".k = a.k AND "
				}
				w("\n  LEFT JOIN ref %s ON %s%s.r = %d", alias, on, alias, spot)
			}
			ref("f", 2*i)
			ref("g", 2*i+1)
			if j >= 0 {
				ref("h", 2*len(q.rules)+j)
			}
		}
		w("\n")
	}
	q.rowsEnd()
}

// countsOnly ends the query with the violation counts alone, the other
// columns NULL.
func (q *query) countsOnly() {
	w := q.w
	key := "k"
	if !q.keyed {
		key = "CAST('' AS VARCHAR) AS k"
	}
	w("a AS MATERIALIZED (\n  SELECT %s, count(*) AS sends, min(t) AS first_t, max(t) AS last_t", key)
	for i := range q.rules {
		w(",\n    count(*) FILTER (WHERE %s) AS n%d", breaks(i, q.reach[i]), i)
	}
	if q.keyed {
		w("\n  FROM s GROUP BY k\n)\n")
	} else {
		// One group: no grouping, and no row for an empty table.
		w("\n  FROM s HAVING count(*) > 0\n)\n")
	}
	q.closeWith()
	names, _ := q.names()
	for i, r := range q.rules {
		if i > 0 {
			w("UNION ALL\n")
		}
		cols := []string{"k", fmt.Sprint(q.index[i]), fmt.Sprintf("'%s'", r), "sends", "first_t", "last_t", fmt.Sprintf("n%d", i)}
		for range len(Columns) - len(cols) - 1 {
			cols = append(cols, "CAST(NULL AS BIGINT)")
		}
		cols = append(cols, badTimes)
		for range len(names) - len(cols) {
			cols = append(cols, "CAST(NULL AS BIGINT)")
		}
		if i == 0 {
			for c := range cols {
				cols[c] += " AS " + names[c]
			}
		}
		w("SELECT %s FROM a\n", strings.Join(cols, ", "))
	}
	q.rowsEnd()
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

package sqlcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// CostColumns are the result columns that follow Columns when the spec has
// a cost rule or a fixed rule: the first violation's own cost and the cost
// of its window, itself included (NULL for call rules), and the time of the
// key's first send whose cost in the rule's unit is NULL, negative or not
// a whole number.
var CostColumns = []string{"first_cost", "first_units", "bad_cost_t"}

// kindError says why rule r cannot be compiled, or nil. A bucket's level
// and a first-call window's start at a send are each a recursion over every
// earlier send, which no set-based query (window functions, grouping)
// computes exactly.
func kindError(r rule.Rule) error {
	switch r.Kind {
	case rule.Bucket:
		return fmt.Errorf("sqlcheck: rule %s: a bucket's level before a send is its level after the send before, refilled and less what that one took: "+
			"a recursion over every earlier send, which no set-based query computes exactly; check an export of the table with rlcheck check", r)
	case rule.FirstCall:
		return fmt.Errorf("sqlcheck: rule %s: a first-call window opens at the first send after the one before it closed: "+
			"a recursion over every earlier send, which no set-based query computes exactly; check an export of the table with rlcheck check", r)
	}
	return nil
}

// slowRules writes the part of the query for the rules the lag test cannot
// judge: cost rules and fixed rules. Each send's index i in its key's time
// order (then the tiebreak) comes from one sort, in o; each rule then gives
// every send s, the cost of its window up to it, itself included, and lo,
// the index of its window's oldest send. Send i breaks the rule when s
// exceeds the limit: a sliding window's s is a RANGE-framed sum, a fixed
// window's a running sum over its window's sends, grouped by the window's
// index (or local date).
type slowRules struct {
	spec  Spec
	idx   []int    // the rules' indices in spec.Rules
	units []string // the units the rules meter, c0, c1, ... in o
	ctes  []string
	sels  []string
}

func newSlowRules(spec Spec) (*slowRules, error) {
	sr := &slowRules{spec: spec}
	for i, r := range spec.Rules {
		if r.SlidingCalls() {
			continue
		}
		if err := kindError(r); err != nil {
			return nil, err
		}
		if r.Unit != "" && spec.Table.Tiebreak == "" {
			return nil, fmt.Errorf("sqlcheck: rule %s: which of the sends at one instant breaks a cost rule depends on their order: "+
				"name the column that orders them (sqlcheck.Table.Tiebreak), as check takes them in the order of their lines", r)
		}
		if r.Unit != "" && !slices.Contains(sr.units, r.Unit) {
			sr.units = append(sr.units, r.Unit)
		}
		sr.idx = append(sr.idx, i)
	}
	return sr, nil
}

// tb is the tiebreak column to carry, if any.
func (sr *slowRules) tb() string {
	if sr.spec.Table.Tiebreak != "" {
		return ", tb"
	}
	return ""
}

// costCol is the column holding each send's cost in unit.
func (sr *slowRules) costCol(unit string) string {
	if c, ok := sr.spec.Table.Costs[unit]; ok {
		return c
	}
	return unit
}

// comment describes rule n, a slow rule, for the query's header.
func (sr *slowRules) comment(n int, reach int64) string {
	r := sr.spec.Rules[n]
	what := "sends"
	if r.Unit != "" {
		what = r.Unit
	}
	if r.Kind == rule.Fixed {
		return fmt.Sprintf("-- rule %d: %s: send i breaks it when the %s of its fixed window up to it pass %d.\n", n, r, what, r.Limit)
	}
	return fmt.Sprintf("-- rule %d: %s: send i breaks it when the %s from t_i - %d to it pass %d.\n", n, r, what, reach, r.Limit)
}

// write builds the CTEs and the result rows; key, timeCol, table and tb
// are the parts of the source the call rules' query reads too.
func (sr *slowRules) write(key, timeCol, table string) error {
	t := sr.spec.Table
	cols := []string{key + " AS k", fmt.Sprintf("CAST(%s AS BIGINT) AS t", timeCol)}
	order := "t"
	if t.Tiebreak != "" {
		c, err := ident(t.Tiebreak)
		if err != nil {
			return fmt.Errorf("sqlcheck: sqlcheck.Table.Tiebreak: %w", err)
		}
		cols = append(cols, fmt.Sprintf("CAST(%s AS BIGINT) AS tb", c))
		order = "t, tb"
	}
	var bad []string
	for u, unit := range sr.units {
		c, err := ident(sr.costCol(unit))
		if err != nil {
			return fmt.Errorf("sqlcheck: the cost column of %s: %w", unit, err)
		}
		cols = append(cols, fmt.Sprintf("CAST(%s AS BIGINT) AS c%d, %s AS f%d", c, u, notWhole(c), u))
		bad = append(bad, fmt.Sprintf(",\n    min(t) FILTER (WHERE c%d IS NULL OR c%d < 0 OR f%d) AS bad%d", u, u, u, u))
	}
	sr.ctes = append(sr.ctes,
		fmt.Sprintf("o AS MATERIALIZED (\n  SELECT *, row_number() OVER (PARTITION BY k ORDER BY %s) - 1 AS i\n  FROM (SELECT %s FROM %s) x\n)", order, strings.Join(cols, ", "), table),
		fmt.Sprintf("gk AS MATERIALIZED (\n  SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t%s\n  FROM o GROUP BY k\n)", strings.Join(bad, "")))
	for _, n := range sr.idx {
		if err := sr.rule(n); err != nil {
			return err
		}
	}
	return nil
}

// rule writes rule n's CTEs and its result rows.
func (sr *slowRules) rule(n int) error {
	r := sr.spec.Rules[n]
	c := "1"
	if r.Unit != "" {
		c = fmt.Sprintf("c%d", slices.Index(sr.units, r.Unit))
	}
	if r.Kind == rule.Fixed {
		w, err := sr.windowOf(r)
		if err != nil {
			return err
		}
		sr.ctes = append(sr.ctes, fmt.Sprintf("rs%d AS MATERIALIZED (\n  SELECT k, i, t%s, c,\n"+
			"    sum(c) OVER (PARTITION BY k, w ORDER BY i ROWS UNBOUNDED PRECEDING) AS s,\n"+
			"    min(i) OVER (PARTITION BY k, w) AS lo\n"+
			"  FROM (SELECT k, i, t%s, %s AS c, %s AS w FROM o) x\n)", n, sr.tb(), sr.tb(), c, w))
	} else {
		before := fmt.Sprintf("OVER (PARTITION BY k ORDER BY t RANGE BETWEEN UNBOUNDED PRECEDING AND %d PRECEDING)", Reach(r.Window, sr.spec.Table.Unit, sr.spec.Boundary)+1)
		sr.ctes = append(sr.ctes, fmt.Sprintf("rs%d AS MATERIALIZED (\n  SELECT k, i, t%s, %s AS c,\n"+
			"    sum(%s) OVER (PARTITION BY k ORDER BY i ROWS UNBOUNDED PRECEDING) - COALESCE(sum(%s) %s, 0) AS s,\n"+
			"    count(*) %s AS lo\n  FROM o\n)", n, sr.tb(), c, c, c, before, before))
	}
	sr.ctes = append(sr.ctes, fmt.Sprintf("rv%d AS MATERIALIZED (\n  SELECT k, count(*) FILTER (WHERE s > %d) AS n, min(i) FILTER (WHERE s > %d) AS fi, max(s) AS mx\n  FROM rs%d GROUP BY k\n)", n, r.Limit, r.Limit, n))
	if sr.spec.MaxWindow {
		sr.ctes = append(sr.ctes, fmt.Sprintf("rx%d AS (\n  SELECT r.k, min(r.i) AS mi FROM rs%d r JOIN rv%d v ON r.k = v.k AND r.s = v.mx GROUP BY r.k\n)", n, n, n))
	}
	sr.sels = append(sr.sels, sr.row(n, r))
	return nil
}

// row is rule n's result rows, one per key.
func (sr *slowRules) row(n int, r rule.Rule) string {
	null := "CAST(NULL AS BIGINT)"
	ref := func(alias string) string {
		if sr.spec.Table.Tiebreak != "" {
			return alias + ".tb"
		}
		return alias + ".i + 1"
	}
	bad := null
	if r.Unit != "" {
		bad = fmt.Sprintf("gk.bad%d", slices.Index(sr.units, r.Unit))
	}
	cols := []string{"gk.k", fmt.Sprint(n), fmt.Sprintf("'%s'", r), "gk.sends", "gk.first_t", "gk.last_t", fmt.Sprintf("rv%d.n", n)}
	from := fmt.Sprintf("FROM gk JOIN rv%d ON rv%d.k = gk.k", n, n)
	if sr.spec.CountsOnly {
		for range len(Columns) - len(cols) - 1 {
			cols = append(cols, null)
		}
		cols = append(cols, badTimes, null, null, bad)
	} else {
		from += fmt.Sprintf("\n  LEFT JOIN rs%d f ON f.k = gk.k AND f.i = rv%d.fi\n  LEFT JOIN o fw ON fw.k = gk.k AND fw.i = f.lo", n, n)
		cols = append(cols, "f.i", "f.t", ref("f"), "f.lo", "fw.t", ref("fw"))
		if sr.spec.MaxWindow {
			from += fmt.Sprintf("\n  LEFT JOIN rx%d ON rx%d.k = gk.k\n  LEFT JOIN rs%d m ON m.k = gk.k AND m.i = rx%d.mi\n  LEFT JOIN o mw ON mw.k = gk.k AND mw.i = m.lo", n, n, n, n)
			cols = append(cols, fmt.Sprintf("CAST(rv%d.mx AS BIGINT)", n), fmt.Sprintf("CASE WHEN rv%d.mx > 0 THEN mw.t END", n), fmt.Sprintf("CASE WHEN rv%d.mx > 0 THEN %s END", n, ref("mw")))
		} else {
			cols = append(cols, null, null, null)
		}
		cols = append(cols, badTimes)
		if r.Unit != "" {
			cols = append(cols, "f.c", "CAST(f.s AS BIGINT)", bad)
		} else {
			cols = append(cols, null, null, bad)
		}
	}
	names := append(slices.Clone(Columns), CostColumns...)
	for i := range cols {
		cols[i] += " AS " + names[i]
	}
	return fmt.Sprintf("SELECT %s\n%s\n", strings.Join(cols, ", "), from)
}

// windowOf is the expression, on a row of o, that names the fixed window
// holding its send: the window's start ⌊(t - o) / W⌋·W, an integer found
// without a division, or the send's local date in the rule's zone (offsets
// are whole seconds, so the date of the whole second is the date of the
// instant). DuckDB's / divides integers as floats, which puts two sends
// 100 ns apart near 1.7e18 ns in one window: no window index is divided.
func (sr *slowRules) windowOf(r rule.Rule) (string, error) {
	u := sr.spec.Table.Unit
	if r.Zone != "" {
		if strings.ContainsAny(r.Zone, "'\\") {
			return "", fmt.Errorf("sqlcheck: rule %s: a zone with a quote", r)
		}
		return fmt.Sprintf("CAST((to_timestamp(%s) AT TIME ZONE '%s') AS DATE)", seconds("t", int64(time.Second/u)), r.Zone), nil
	}
	x, w := fmt.Sprintf("(t * %d - %d)", int64(u), int64(r.Offset)), int64(r.Window)
	if r.Window%u == 0 && r.Offset%u == 0 {
		x, w = fmt.Sprintf("(t - %d)", int64(r.Offset/u)), int64(r.Window/u)
	}
	if r.Offset == 0 {
		x = "t"
	}
	return floorTo(x, w), nil
}

// floorTo is ⌊x / d⌋·d for d > 0, the largest multiple of d not above x,
// in integers: both engines' % rounds toward zero, and no division.
func floorTo(x string, d int64) string {
	if d == 1 {
		return x
	}
	return fmt.Sprintf("(%s - ((%s %% %d) + %d) %% %d)", x, x, d, d, d)
}

// seconds is ⌊x / d⌋ for d > 0, the whole seconds of a time x in units of
// 1/d s, as a BIGINT. The dividend is a multiple of d, so PostgreSQL's
// integer division is exact; DuckDB divides as floats, whose quotient of
// an exact multiple is correctly rounded and within 2^-52 of the whole
// number, which the cast restores for any count of seconds below 2^51:
// far past the years either engine's timestamps hold.
func seconds(x string, d int64) string {
	if d == 1 {
		return x
	}
	return fmt.Sprintf("CAST(%s / %d AS BIGINT)", floorTo(x, d), d)
}

// Package sqlcheck compiles a set of rules into one SQL query that checks a
// table of sends where it lives, with exactly the semantics of `rlcheck
// check`, and turns the query's rows into a report.Result that
// logcheck's writers report.
//
// Send i breaks rule N/W when N or more earlier sends of its key lie in
// (t_i-W, t_i]; on sends ordered by time (then the tiebreak column) that is
//
//	t - lag(t, N) OVER (PARTITION BY key ORDER BY t, tiebreak) < W
//
// computed on the integer time column in its own unit: with unit u the test
// is t_i - t_{i-N} <= K, K = ceil(W/u)-1 for half-open windows and
// floor(W/u) for closed ones, which is the checker's test on t*u exactly;
// the query writes it lag(t, N) >= t - K, which DuckDB evaluates faster.
// The first violation needs no index from the sort: at its instant ft it
// is send lo+N, lo the sends before ft-K, counted by one scan.
// The largest number of sends in one window is cum-lo: the sends up to t_i
// less those before t_i-K, counted by sorting a probe at t_i-K among the
// sends; a range-framed count(*) OVER (ORDER BY t RANGE BETWEEN K
// PRECEDING AND CURRENT ROW) gives the same, but DuckDB takes about ten
// times as long over it.
//
// Cost rules and fixed rules take another path, after one sort of the
// sends into each key's order (time, then the tiebreak, which a cost rule
// needs: the order of ties decides which breaks it): send i's window cost,
// itself included, is a running sum less a RANGE-framed sum of the sends
// before t_i-K on sliding windows, and a running sum per window index (or
// local date, AT TIME ZONE) on fixed ones; the send breaks the rule when
// it exceeds the limit. Bucket and first-call rules are refused: their
// state at a send is a recursion over every earlier send.
//
// The same text runs on PostgreSQL and DuckDB (docs/sql.md).
package sqlcheck

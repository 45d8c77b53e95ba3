// Command duckdb-baseline counts rate-limit violations in a ts_ns,key CSV
// with DuckDB window queries, the tool a data engineer would reach for, so
// that `rlcheck check` has a measured baseline to beat.
//
// It loads the CSV into an in-memory database (the load is part of the
// measured time) and, for each rule N/W, counts the sends whose N-th
// predecessor in time order lies less than W earlier:
//
//	SELECT count(*) FROM (SELECT ts_ns - lag(ts_ns, N) OVER (ORDER BY ts_ns) AS d FROM t) WHERE d < W_ns
//
// That is the half-open rule of docs/semantics: send i violates N/W when
// t[i] - t[i-N] < W. The module is separate from rlcheck's so that DuckDB never
// becomes one of rlcheck's dependencies.
//
//	go run . -csv /tmp/rlcheck-bench/sends-10000000.csv
//	go run . -csv sends.csv -rules 5/1s,12/3s -threads 1
//
// -compare N runs rlcheck's generated query (rlcheck sql), the one-query
// baseline and the counts-only query N times each in turn on one loaded
// table, with wall and CPU times; -sql FILE runs the statements of a file
// on it, each with its wall and CPU time (EXPLAIN ANALYZE ... profiles one;
// PRAGMA enable_profiling = 'json' and PRAGMA profiling_output = 'PATH'
// write the following statements' profiles as JSON). Repeating statements
// in the file alternates them.
package main

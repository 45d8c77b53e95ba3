// Package difftest draws random send logs of every rule kind and says what
// internal/oracle judges them to be, so that the differential tests (its
// own, and bench/duckdb's) can hold check, watch, serve, sql, merge and the
// in-memory limiters to the written definitions. It is test support:
// nothing but tests imports it.
package difftest

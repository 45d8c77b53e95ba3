package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/internal/pgtest"
)

func TestSQLPrintsQuery(t *testing.T) {
	out, errOut, code := run(t, "", "sql", "--contract", "../../testdata/contracts/api.yaml", "--table", "sends",
		"--time-col", "ts_ms", "--time-unit", "ms", "--key-col", "tenant", "--tiebreak", "line")
	require.Equal(t, 0, code, errOut)
	want, err := os.ReadFile("../../sqlcheck/testdata/api.sql")
	require.NoError(t, err)
	assert.Equal(t, string(want), out)
}

func TestSQLUsage(t *testing.T) {
	for _, args := range [][]string{
		{"sql", "--rules", "5/1s", "--time-col", "ts"},
		{"sql", "--rules", "5/1s", "--table", "t", "--time-col", "ts", "--time-unit", "min"},
		{"sql", "--rules", "5 per s", "--table", "t", "--time-col", "ts"},
		{"sql", "--rules", "5/1s", "--table", "t", "--time-col", "ts", "--run", "mysql://x"},
	} {
		_, errOut, code := run(t, "", args...)
		assert.Equal(t, 2, code, "%q", args)
		assert.NotEmpty(t, errOut, "%q", args)
	}
}

// --run reports the sequential fixture as check does: 2 violations, exit 1.
func TestSQLRunPostgres(t *testing.T) {
	srv, db := pgtest.Start(t)
	_, err := db.Exec("CREATE TABLE sends (ts_us bigint, line bigint)")
	require.NoError(t, err)
	var vals []string
	for i, ns := range fixtures.MustTimes(t, "asyncio-sequential.txt") {
		vals = append(vals, fmt.Sprintf("(%d, %d)", ns/1000, i+1))
	}
	_, err = db.Exec("INSERT INTO sends VALUES " + strings.Join(vals, ","))
	require.NoError(t, err)
	out, errOut, code := run(t, "", "sql", "--rules", "5/1s,12/3s", "--table", "sends", "--time-col", "ts_us",
		"--time-unit", "us", "--tiebreak", "line", "--max-window", "--run", srv.URL)
	require.Equal(t, 1, code, errOut)
	check, _, _ := run(t, "", "check", "--rules", "5/1s,12/3s", seqLog)
	// The same table of rules and the same verdict; only the input lines differ.
	assert.Equal(t, tail(check, 2), tail(out, 2))
	assert.Contains(t, out, "FAIL: 2 violations (5/1s: 2)")
	// Without --max-window, the same first violations, and a note on what is missing.
	out, errOut, code = run(t, "", "sql", "--rules", "5/1s,12/3s", "--table", "sends", "--time-col", "ts_us",
		"--time-unit", "us", "--tiebreak", "line", "--run", srv.URL)
	require.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "line 28 at 6.003795000 s: 6 sends in the window from line 23 (5.005274000 s)")
	assert.Contains(t, out, "not checked: the largest count in one window, shown as - (--max-window adds it")
}

// sql refused cost and fixed rules; --run reports them as check does on
// the same sends, costs read from the column --cost names.
func TestSQLRunPostgresCostsAndFixed(t *testing.T) {
	srv, db := pgtest.Start(t)
	_, err := db.Exec("CREATE TABLE llm (ts_ms bigint, key text, line bigint, total_tokens bigint)")
	require.NoError(t, err)
	csv, err := os.ReadFile("../../testdata/costs/llm.csv")
	require.NoError(t, err)
	var vals []string
	for i, l := range strings.Split(strings.TrimSpace(string(csv)), "\n")[1:] {
		f := strings.Split(l, ",")
		vals = append(vals, fmt.Sprintf("(%s, '%s', %d, %s)", f[0], f[1], i+2, f[2]))
	}
	_, err = db.Exec("INSERT INTO llm VALUES " + strings.Join(vals, ","))
	require.NoError(t, err)
	const rules = "5/1m, 100000 tokens/1m, 60000 tokens/1m fixed"
	out, errOut, code := run(t, "", "sql", "--rules", rules, "--table", "llm", "--time-col", "ts_ms", "--time-unit", "ms",
		"--key-col", "key", "--tiebreak", "line", "--cost", "tokens=total_tokens", "--max-window", "--run", srv.URL)
	require.Equal(t, 1, code, errOut)
	check, _, _ := run(t, "", "check", "--rules", rules, "--key-col", "key", "../../testdata/costs/llm.csv")
	assert.Equal(t, tail(check, 2), tail(out, 2))
	assert.Contains(t, out, "2 sends holding 75000 tokens in the fixed window")
}

func withoutFiles(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(doc), &m))
	delete(m, "files")
	return m
}

// tail drops the first n lines.
func tail(s string, n int) string { return strings.Join(strings.Split(s, "\n")[n:], "\n") }

// Shards of the sequential fixture, merged, give check's report; a shard
// without enough context is refused.
func TestCheckShardsAndMerge(t *testing.T) {
	dir := t.TempDir()
	whole, _, code := run(t, "", "check", "--rules", "5/1s,12/3s", "--format", "json", seqLog)
	require.Equal(t, 1, code)
	var paths []string
	for i, bounds := range [][]string{{"--to", "3000000000"}, {"--from", "3000000000", "--to", "5000000000"}, {"--from", "5000000000"}} {
		out, errOut, code := run(t, "", append([]string{"check", "--rules", "5/1s,12/3s", "--format", "json", seqLog}, bounds...)...)
		require.LessOrEqual(t, code, 1, errOut)
		p := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		paths = append(paths, p)
	}
	merged, errOut, code := run(t, "", append([]string{"merge", "--format", "json"}, paths...)...)
	require.Equal(t, 1, code, errOut)
	// The same verdict; the shards read the file's 30 lines three times.
	assert.Equal(t, withoutFiles(t, whole), withoutFiles(t, merged))

	// The in-flight cap and listed violations merge too, here per key.
	host := "../../testdata/fleet/host1.csv"
	args := []string{"check", "--rules", "2/1s", "--key-col", "tenant", "--max-in-flight", "1", "--duration-col", "took_ms",
		"--duration-unit", "ms", "--list", "1", "--format", "json", host}
	whole, _, code = run(t, "", args...)
	require.Equal(t, 1, code)
	paths = nil
	for i, bounds := range [][]string{{"--to", "1767225601000000000"}, {"--from", "1767225601000000000"}} {
		out, errOut, code := run(t, "", append(args, bounds...)...)
		require.LessOrEqual(t, code, 1, errOut)
		p := filepath.Join(dir, fmt.Sprintf("host%d.json", i))
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		paths = append(paths, p)
	}
	merged, errOut, code = run(t, "", append([]string{"merge", "--list", "1", "--format", "json"}, paths...)...)
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, withoutFiles(t, whole), withoutFiles(t, merged))
	_, errOut, code = run(t, "", append([]string{"merge"}, paths...)...)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "give merge the --list they were checked with")

	_, errOut, code = run(t, "", "check", "--rules", "5/1s,12/3s", "--from", "1s", seqLog)
	assert.Equal(t, 2, code)
	_, errOut, code = run(t, "", "check", "--rules", "5/1s,12/3s", "--from", "2000000000", seqLog)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "1s of context is missing")
}

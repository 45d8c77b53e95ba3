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
)

// shardFiles checks seqLog once per bounds and writes each JSON report to
// dir, returning their paths.
func shardFiles(t *testing.T, dir string, rules string, bounds ...[]string) []string {
	t.Helper()
	var paths []string
	for i, b := range bounds {
		out, errOut, code := run(t, "", append([]string{"check", "--rules", rules, "--format", "json", seqLog}, b...)...)
		require.LessOrEqual(t, code, 1, errOut)
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		paths = append(paths, p)
	}
	return paths
}

// merge accepted duplicated, overlapping, missing and edited shards and
// added them up; it refuses each, exit 2, naming the shard and the reason.
func TestMergeRefusesShardsThatDoNotAddUp(t *testing.T) {
	dir := t.TempDir()
	const rules = "5/1s,12/3s"
	p := shardFiles(t, dir, rules, nil, []string{"--to", "3000000000"}, []string{"--from", "3000000000"},
		[]string{"--to", "4000000000"})
	whole, a, b, aLate := p[0], p[1], p[2], p[3]
	wholeOut, _, code := run(t, "", "check", "--rules", rules, "--format", "json", seqLog)
	require.Equal(t, 1, code)
	out, errOut, code := run(t, "", "merge", "--format", "json", a, b)
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, withoutFiles(t, wholeOut), withoutFiles(t, out))

	doc, err := os.ReadFile(b)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	m["violations"] = -15
	tampered, err := json.Marshal(m)
	require.NoError(t, err)
	bTampered := filepath.Join(dir, "tampered.json")
	require.NoError(t, os.WriteFile(bTampered, tampered, 0o644))

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{a, a, b}, []string{a + ": a duplicate of " + a}},
		{[]string{whole, whole}, []string{whole + ": a duplicate of " + whole}},
		{[]string{b}, []string{b + ": the first shard judges", "in no report", "--subset"}},
		{[]string{aLate, b}, []string{b + ": overlaps " + aLate, "would count twice"}},
		{[]string{a, bTampered}, []string{bTampered + ": the report contradicts itself: violations is -15"}},
	} {
		_, errOut, code := run(t, "", append([]string{"merge"}, tc.args...)...)
		assert.Equal(t, 2, code, "merge %v", tc.args)
		for _, w := range tc.want {
			assert.Contains(t, errOut, w, "merge %v", tc.args)
		}
	}
	// A deliberate subset is accepted, and speaks of its shards only.
	out, errOut, code = run(t, "", "merge", "--subset", "--format", "json", b)
	assert.LessOrEqual(t, code, 1, errOut)
	var sub, shard struct{ Sends int64 }
	require.NoError(t, json.Unmarshal([]byte(out), &sub))
	require.NoError(t, json.Unmarshal(doc, &shard))
	assert.Equal(t, shard.Sends, sub.Sends)
}

// A rule in the contract and the flags, or twice in the flags, was checked
// twice and its violations counted twice; it is checked once, with a
// warning, in check and sql alike.
func TestRuleGivenTwice(t *testing.T) {
	once, _, code := run(t, "", "check", "--rules", "5/1s,12/3s", "--format", "json", seqLog)
	require.Equal(t, 1, code)
	for _, args := range [][]string{
		{"--rules", "5/1s,12/3s,5/1s"},
		{"--rule", "5/s", "--rules", "5/1s,12/3s"},
		{"--rule", "5/1s", "--rule", "12/3s", "--rules", "12/3s"},
	} {
		twice, errOut, code := run(t, "", append(append([]string{"check", "--format", "json"}, args...), seqLog)...)
		assert.Equal(t, 1, code, "%v", args)
		assert.Equal(t, withoutFiles(t, once), withoutFiles(t, twice), "%v", args)
		assert.Contains(t, errOut, "given twice", "%v", args)
	}
	contract := "../../testdata/contracts/api.yaml"
	plain, _, _ := run(t, "", "check", "--contract", contract, "--format", "json", seqLog)
	both, errOut, _ := run(t, "", "check", "--contract", contract, "--rules", "10/s", "--format", "json", seqLog)
	assert.Equal(t, withoutFiles(t, plain), withoutFiles(t, both))
	assert.Contains(t, errOut, "rule 10/1s is given twice (in the contract "+contract+", then in --rules)")

	q1, _, code := run(t, "", "sql", "--rules", "5/1s", "--table", "t", "--time-col", "ts")
	require.Equal(t, 0, code)
	q2, errOut, code := run(t, "", "sql", "--rules", "5/1s,5/s", "--table", "t", "--time-col", "ts")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, q1, q2)
}

// check --from at the log's first instant, or within its longest window,
// was refused with no way out; the message says what to do, and
// --log-start states that the input is the log from its first line, so a
// log shorter than its longest window can be cut into shards and merged.
func TestLogStartShards(t *testing.T) {
	const rules = "5/1s,12/3s,20/1m" // the log is 7 s long
	_, errOut, code := run(t, "", "check", "--rules", rules, "--from", "0", seqLog)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "1m0s of context is missing")
	assert.Contains(t, errOut, "--log-start")
	_, errOut, code = run(t, "", "check", "--rules", rules, "--from", "3000000000", seqLog)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--log-start")

	whole, _, code := run(t, "", "check", "--rules", rules, "--format", "json", seqLog)
	require.Equal(t, 1, code)
	dir := t.TempDir()
	for _, set := range [][][]string{
		{{"--from", "0", "--log-start"}},
		{{"--to", "2500000000"}, {"--from", "2500000000", "--to", "5000000000", "--log-start"}, {"--from", "5000000000", "--log-start"}},
	} {
		paths := shardFiles(t, dir, rules, set...)
		merged, errOut, code := run(t, "", append([]string{"merge", "--format", "json"}, paths...)...)
		require.Equal(t, 1, code, errOut)
		assert.Equal(t, withoutFiles(t, whole), withoutFiles(t, merged), "%v", set)
	}
}

// check --from/--to and merge refused every rule that was not a sliding
// call rule; they take every kind, a bucket and a first-call rule with
// --log-start (their state at --from needs the whole log before it).
func TestShardsOfKindsMergeToWhole(t *testing.T) {
	const rules = "5/1s fixed,12/3s fixed at 500ms,4/1s burst 6,6/2s first-call"
	whole, _, code := run(t, "", "check", "--rules", rules, "--format", "json", "--list", "3", seqLog)
	require.Equal(t, 1, code)
	_, errOut, code := run(t, "", "check", "--rules", rules, "--from", "3000000000", seqLog)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "rule 4/1s burst 6: its state at the shard's start")
	dir := t.TempDir()
	paths := shardFiles(t, dir, rules, []string{"--to", "2500000000", "--list", "3"},
		[]string{"--from", "2500000000", "--to", "5000000000", "--log-start", "--list", "3"}, []string{"--from", "5000000000", "--log-start", "--list", "3"})
	merged, errOut, code := run(t, "", append([]string{"merge", "--format", "json", "--list", "3"}, paths...)...)
	require.Equal(t, 1, code, errOut)
	assert.Equal(t, withoutFiles(t, whole), withoutFiles(t, merged))
}

// --format github --list N wrote one ::error per rule; it writes one per
// listed violation, on its file and line.
func TestGitHubAnnotationPerListedViolation(t *testing.T) {
	var rep struct {
		Rules []struct {
			Listed []struct{ Line int64 } `json:"violations_listed"`
		}
	}
	out, _, code := run(t, "", "check", "--rules", "5/1s,12/3s,6/2s", "--list", "10", "--format", "json", seqLog)
	require.Equal(t, 1, code)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var want []string
	for _, r := range rep.Rules {
		for _, v := range r.Listed {
			want = append(want, fmt.Sprintf("file=%s,line=%d,", seqLog, v.Line))
		}
	}
	require.Greater(t, len(want), len(rep.Rules)-1, "the rules should list several violations")
	out, _, code = run(t, "", "check", "--rules", "5/1s,12/3s,6/2s", "--list", "10", "--format", "github", seqLog)
	require.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, min(len(want), 10), out)
	for _, w := range want[:min(len(want), 9)] {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, "::error "+w)
		}
		assert.True(t, found, "no annotation %q in\n%s", w, out)
	}
}

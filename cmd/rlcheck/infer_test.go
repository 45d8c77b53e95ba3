package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// inferred is the part of infer's JSON report these tests read.
type inferred struct {
	Keys []struct {
		Verdict  string
		Rules    string
		Contract []struct {
			Rule     string
			WindowNs int64 `json:"window_ns"`
			Kind     string
			Min      int
			Max      *int
		}
		Unexplained []struct{ Line, Tightest int64 } `json:"unexplained"`
	}
}

// TestInferFindsSevenAndForty: a log from a provider holding 7/1s and
// 40/10s (sliding, refused calls counted), read as ts_ms,status, names a
// 1s rule whose range holds 7 and a 10s rule whose range holds 40; the
// rules it prints are usable as --rules, and the accepted calls keep them.
func TestInferFindsSevenAndForty(t *testing.T) {
	hidden, err := rule.ParseList("7/1s,40/10s")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 40))
	calls := infertest.Replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, hidden[0], 4000))
	dir := t.TempDir()
	logPath, acceptedPath := filepath.Join(dir, "log.csv"), filepath.Join(dir, "accepted.txt")
	f, err := os.Create(logPath)
	require.NoError(t, err)
	require.NoError(t, infertest.WriteCSV(f, calls))
	require.NoError(t, f.Close())
	var accepted strings.Builder
	for _, c := range calls {
		if !c.Refused {
			accepted.WriteString(strconv.FormatInt(c.At, 10) + "\n")
		}
	}
	require.NoError(t, os.WriteFile(acceptedPath, []byte(accepted.String()), 0o644))

	out, stderr, code := run(t, "", "infer", "--format", "json", logPath)
	require.Equal(t, 0, code, stderr)
	var rep inferred
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Keys, 1)
	k := rep.Keys[0]
	assert.Equal(t, "fits", k.Verdict)
	for _, h := range hidden {
		found := false
		for _, r := range k.Contract {
			if r.WindowNs == int64(h.Window) && r.Kind == "sliding" {
				found = true
				require.NotNil(t, r.Max, "%s: a refused call bounds it", r.Rule)
				assert.True(t, r.Min <= h.Limit && h.Limit <= *r.Max, "%s: [%d, %d] holds %d", r.Rule, r.Min, *r.Max, h.Limit)
			}
		}
		assert.True(t, found, "a %v rule among %+v", h.Window, k.Contract)
	}
	_, err = rule.ParseList(k.Rules)
	require.NoError(t, err, "the rules read back as --rules")
	_, stderr, code = run(t, "", "check", "--rules", k.Rules, "--unit", "ns", acceptedPath)
	assert.Equal(t, 0, code, "the accepted calls keep the inferred rules: %s", stderr)
}

// TestInferContradiction: a refusal no rule on the grid explains exits 1
// and names the refused line and the accepted one that contradicts it.
func TestInferContradiction(t *testing.T) {
	day := int64(24 * time.Hour / time.Millisecond)
	p := filepath.Join(t.TempDir(), "log.csv")
	require.NoError(t, os.WriteFile(p, []byte("ts_ms,status\n0,200\n1,200\n2,200\n"+strconv.FormatInt(3*day, 10)+",429\n"), 0o644))
	out, _, code := run(t, "", "infer", "--unit", "ms", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "line 5 at 259200.000000000 s was refused with 0 earlier calls in its 1s sliding window; line 4 was accepted with 2 in its own")
	out, _, code = run(t, "", "infer", "--unit", "ms", "--format", "json", p)
	assert.Equal(t, 1, code)
	var rep inferred
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "contradiction", rep.Keys[0].Verdict)
	assert.Equal(t, int64(5), rep.Keys[0].Unexplained[0].Line)
}

// TestInferBadInput: a bad status, a log without statuses and a bad flag
// exit 2 with a message naming the place.
func TestInferBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("ts,status\n1,200\n2,maybe\n"), 0o644))
	plain := filepath.Join(dir, "plain.txt")
	require.NoError(t, os.WriteFile(plain, []byte("1\n2\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"infer", bad}, bad + `:3: the status is not an HTTP status code: "maybe"`},
		{[]string{"infer", plain}, "--status-col"},
		{[]string{"infer", "--format", "xml", bad}, `--format "xml"`},
		{[]string{"infer"}, "accepts 1 arg"},
	} {
		_, stderr, code := run(t, "", c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

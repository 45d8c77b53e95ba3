package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeLog writes lines to a file in a fresh directory.
func writeLog(t *testing.T, lines string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sends.txt")
	require.NoError(t, os.WriteFile(p, []byte(lines), 0o644))
	return p
}

// kindVerdict runs check --format json and returns each rule's kind,
// violations and first violation's extras.
type kindVerdict struct {
	Rules []struct {
		Rule       string
		Kind       string
		Violations int64
		First      *struct {
			Line int64
			Span *struct {
				FromNs int64 `json:"from_ns"`
				ToNs   int64 `json:"to_ns"`
			} `json:"fixed_window"`
			Level  string `json:"bucket_level"`
			Window []struct{ Line int64 }
		} `json:"first_violation"`
	}
}

func checkJSON(t *testing.T, wantCode int, args ...string) kindVerdict {
	t.Helper()
	out, errOut, code := run(t, "", append([]string{"check", "--format", "json", "--list", "1"}, args...)...)
	require.Equal(t, wantCode, code, "exit code; stderr %q", errOut)
	var v kindVerdict
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

// TestCheckFixedAndSliding: sends at 0.9, 0.95, 0.99, 1.0, 1.05 and 1.1 s
// keep 3/1s fixed (three on each side of the edge at 1 s) and break the
// sliding 3/1s three times.
func TestCheckFixedAndSliding(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	log := writeLog(t, "0.9\n0.95\n0.99\n1.0\n1.05\n1.1\n")
	fixed := checkJSON(t, exitOK, "--rules", "3/1s fixed", log)
	require.Len(t, fixed.Rules, 1)
	assert.Equal(t, "3/1s fixed", fixed.Rules[0].Rule)
	assert.Equal(t, "fixed", fixed.Rules[0].Kind)
	assert.Zero(t, fixed.Rules[0].Violations)

	sliding := checkJSON(t, exitViolations, "--rules", "3/1s", log)
	assert.Equal(t, int64(3), sliding.Rules[0].Violations)
	assert.Empty(t, sliding.Rules[0].Kind, "a sliding rule's kind is left out, as before")

	two := checkJSON(t, exitViolations, "--rules", "2/1s fixed", log)
	first := two.Rules[0].First
	require.NotNil(t, first)
	require.NotNil(t, first.Span, "a fixed violation names its window")
	assert.Equal(t, int64(0), first.Span.FromNs)
	assert.Equal(t, int64(1e9), first.Span.ToNs)

	out, _, code := run(t, "", "check", "--rules", "2/1s fixed", "--list", "1", log)
	assert.Equal(t, exitViolations, code)
	assert.Contains(t, out, "2/1s fixed violation 1 of 2: line 3 at 0.990000000 s; 3 sends in the fixed window [0.000000000 s, 1.000000000 s), from line 1")
}

// TestCheckBucket: 2/1s burst 4 after four sends at 0 s holds 0.8 at 0.4 s
// (a violation) and exactly 1 at 0.5 s (none).
func TestCheckBucket(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	early := checkJSON(t, exitViolations, "--rules", "2/1s burst 4", writeLog(t, "0\n0\n0\n0\n0.4\n"))
	r := early.Rules[0]
	assert.Equal(t, "bucket", r.Kind)
	assert.Equal(t, int64(1), r.Violations)
	require.NotNil(t, r.First)
	assert.Equal(t, int64(5), r.First.Line)
	assert.Equal(t, "0.8", r.First.Level)

	late := checkJSON(t, exitOK, "--rules", "2/1s burst 4", writeLog(t, "0\n0\n0\n0\n0.5\n"))
	assert.Zero(t, late.Rules[0].Violations)

	out, _, _ := run(t, "", "check", "--rules", "2/1s burst 4", "--list", "1", writeLog(t, "0\n0\n0\n0\n0.4\n"))
	assert.Contains(t, out, "2/1s burst 4 violation 1 of 1: line 5 at 0.400000000 s; the bucket held 0.8; 5 sends since it was full")
	out, _, _ = run(t, "", "check", "--rules", "2/1s burst 4", "--format", "junit", writeLog(t, "0\n0\n0\n0\n0.4\n"))
	assert.Contains(t, out, "sends.txt:5 (0.400000000 s): the bucket held 0.8", "the CI reports say what was overfilled")
}

// TestCheckRefusesWhatItCannotJudge: a plain log carries no costs, check's
// plots assume sliding windows, and a shard cannot know a bucket's level or
// a first-call window's start without the whole log before it.
func TestCheckRefusesWhatItCannotJudge(t *testing.T) {
	log := writeLog(t, "0\n1\n")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--rules", "90000 tokens/1m"}, "sends.txt: a plain log carries no tokens cost: costs are read from CSV columns or JSON-lines fields"},
		{[]string{"--rules", "3/1s burst 3", "--from", "0"}, "rule 3/1s burst 3: its state at the shard's start (a bucket's level, the start of a first-call window) depends on every earlier send"},
		{[]string{"--rules", "3/1s first-call", "--to", "1", "--from", "0"}, "state that it does, or check the whole log at once (--log-start)"},
		{[]string{"--rules", "3/1s fixd"}, "a rule is LIMIT[ UNIT]/WINDOW[ KIND]"},
	} {
		out, errOut, code := run(t, "", append(append([]string{"check"}, tt.args...), log)...)
		assert.Equal(t, exitUsage, code, "%v", tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
	}
}

// TestCommandsRefuseKindsAndCosts: the commands that enforce or judge
// sliding call rules only refuse the others, naming the rule, rather than
// treat them as sliding call rules.
func TestCommandsRefuseKindsAndCosts(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(scenario, []byte("name: s\nrules: [5/1s, 5000/1h fixed]\nstrategies: [combined, xrate-chained]\ncallers: 3\n"), 0o644))
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", scenario}, "strategy xrate-chained keeps sliding rules only so far: it cannot run rule 5000/1h fixed"},
		{[]string{"run", scenario}, "strategy xrate-chained keeps sliding rules only so far: it cannot run rule 5000/1h fixed"},
		{[]string{"sql", "--rules", "10/1s burst 20", "--table", "t", "--time-col", "ts"}, "rule 10/1s burst 20: a bucket's level before a send"},
		{[]string{"sql", "--rules", "90000 tokens/1m", "--table", "t", "--time-col", "ts"}, "which of the sends at one instant breaks a cost rule depends on their order: name the column that orders them (--tiebreak)"},
		{[]string{"sql", "--rules", "90000 tokens/1m", "--table", "t", "--time-col", "ts", "--tiebreak", "id", "--cost", "points=p"}, `--cost "points=p": no rule meters points`},
		{[]string{"serve", "--rules", "90000 tokens/1m", "--duration", "1s"}, "the rules meter tokens: say where a request carries it, --cost tokens=HEADER or --cost tokens=body:FIELD"},
		{[]string{"simulate", "provider-bucket", "--metrics", filepath.Join(dir, "m.prom")}, "rule 10/1s burst 4: --metrics measure sliding rules only so far"},
	} {
		out, errOut, code := run(t, "", tt.args...)
		assert.Equal(t, exitUsage, code, "%v: stderr %q", tt.args, errOut)
		assert.Empty(t, out, "%v", tt.args)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
	}
}

// TestSimulateJSONNamesTheKind: simulate's JSON gives each rule as its
// text and names a kind other than sliding, as check's does.
func TestSimulateJSONNamesTheKind(t *testing.T) {
	out, errOut, code := run(t, "", "simulate", "--format", "json", "provider-bucket")
	require.Equal(t, 0, code, errOut)
	var doc struct {
		Strategies []struct {
			Rules []struct{ Rule, Kind string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.NotEmpty(t, doc.Strategies)
	assert.Equal(t, "10/1s burst 4", doc.Strategies[0].Rules[0].Rule)
	assert.Equal(t, "bucket", doc.Strategies[0].Rules[0].Kind)
}

// TestChartsDrawEveryKind: --plot and --html take fixed, bucket and
// first-call rules, and the exit status is the verdict's.
func TestChartsDrawEveryKind(t *testing.T) {
	dir := t.TempDir()
	png, html := filepath.Join(dir, "p.png"), filepath.Join(dir, "r.html")
	_, errOut, code := run(t, "", "check", "--rules", "4/1s fixed,3/1s burst 6,5/2s first-call", "--plot", png, "--html", html, "../../testdata/infer/calls.csv")
	assert.Equal(t, 1, code, errOut)
	for _, f := range []string{png, html} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		assert.Positive(t, st.Size(), f)
	}
}

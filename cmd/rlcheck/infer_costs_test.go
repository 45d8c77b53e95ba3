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

// costsLog is the log docs/infer.md infers cost rules from: 1,500 calls
// of 0 to 40 tokens replayed through 6/1s and 300 tokens/10s.
func costsLog(t *testing.T) (hidden []rule.Rule, calls []infertest.Call, csv string) {
	hidden, err := rule.ParseList("6/1s,1000 tokens/10s")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	ms := infertest.Traffic(rng, hidden[0], 1500)
	calls = infertest.ReplayCosts(infertest.NewProvider(hidden, true), ms, infertest.Costs(rng, len(ms), 20))
	var b strings.Builder
	require.NoError(t, infertest.WriteCostCSV(&b, calls))
	return hidden, calls, b.String()
}

// TestInferCostsExampleLog: testdata/infer/costs.csv is costsLog (go test
// -run TestInferCostsExampleLog -update writes it).
func TestInferCostsExampleLog(t *testing.T) {
	_, _, want := costsLog(t)
	const path = "../../testdata/infer/costs.csv"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	shipped, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(shipped), path)
}

// TestInferCosts: with --cost, infer finds the provider's call rule and
// its token rule, each range holding the true limit; the rules it prints
// and the contract it writes are what check takes, and the accepted calls
// keep them. Without --cost the token rule cannot be named.
func TestInferCosts(t *testing.T) {
	hidden, calls, csv := costsLog(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(logPath, []byte(csv), 0o644))
	out, stderr, code := run(t, "", "infer", "--cost", "tokens", "--format", "json", logPath)
	require.Equal(t, 0, code, stderr)
	var rep inferred
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	k := rep.Keys[0]
	require.Len(t, k.Contract, 2, k.Rules)
	for i, h := range hidden {
		r := k.Contract[i]
		assert.Equal(t, int64(h.Window), r.WindowNs, r.Rule)
		require.NotNil(t, r.Max, r.Rule)
		assert.True(t, r.Min <= h.Limit && h.Limit <= *r.Max, "%s: [%d, %d] holds %d", r.Rule, r.Min, *r.Max, h.Limit)
	}
	assert.Contains(t, k.Rules, " tokens/10s")

	var accepted strings.Builder
	accepted.WriteString("ts_ns,tokens\n")
	for _, c := range calls {
		if !c.Refused {
			accepted.WriteString(strconv.FormatInt(c.At, 10) + "," + strconv.FormatInt(c.Cost, 10) + "\n")
		}
	}
	acceptedPath := filepath.Join(dir, "accepted.csv")
	require.NoError(t, os.WriteFile(acceptedPath, []byte(accepted.String()), 0o644))
	_, stderr, code = run(t, "", "check", "--rules", k.Rules, acceptedPath)
	assert.Equal(t, 0, code, "the accepted calls keep %s: %s", k.Rules, stderr)

	contractPath := filepath.Join(dir, "api.yaml")
	_, stderr, code = run(t, "", "infer", "--cost", "tokens=tokens", "--write-contract", contractPath, logPath)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(contractPath)
	require.NoError(t, err)
	assert.Contains(t, string(data), " tokens/10s")
	// The contract holds how infer read the log, statuses included: it
	// judges that very log, its refused calls as infer found them.
	_, stderr, code = run(t, "", "check", "--contract", contractPath, logPath)
	assert.Equal(t, 0, code, stderr)

	out, _, _ = run(t, "", "infer", logPath)
	assert.NotContains(t, out, "tokens", "without --cost no cost rule")
}

// TestInferCostsBadInput: a bad --cost, a missing cost column and a bad
// cost exit 2 naming the flag or the line.
func TestInferCostsBadInput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(p, []byte("ts_ms,status,tokens\n1000,200,5\n1001,429,x\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"infer", "--cost", "Tokens", p}, `--cost "Tokens": want UNIT=NAME or UNIT`},
		{[]string{"infer", "--cost", "tokens=", p}, `--cost "tokens="`},
		{[]string{"infer", "--cost", "tokens", "--cost", "tokens=t", p}, "given twice"},
		{[]string{"infer", "--cost", "tokens", p}, p + ":3"},
		{[]string{"infer", "--cost", "points", p}, "points"},
	} {
		_, stderr, code := run(t, "", c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// bucketLog is the log docs/infer.md infers a token bucket from: 1,200
// calls replayed through 4/1s burst 8.
func bucketLog(t *testing.T) (hidden []rule.Rule, csv string) {
	hidden, err := rule.ParseList("4/1s burst 8")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 6))
	calls := infertest.Replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, rule.Rule{Limit: 4, Window: time.Second}, 1200))
	var b strings.Builder
	require.NoError(t, infertest.WriteCSV(&b, calls))
	return hidden, b.String()
}

// TestInferBucketExampleLog: testdata/infer/bucket.csv is bucketLog (go
// test -run TestInferBucketExampleLog -update writes it).
func TestInferBucketExampleLog(t *testing.T) {
	_, want := bucketLog(t)
	const path = "../../testdata/infer/bucket.csv"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	shipped, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, string(shipped), path)
}

// TestInferBucket: infer names the provider's bucket with its rate on the
// grid and its burst inside the reported range; the rule it prints is one
// check takes, and the accepted calls keep it.
func TestInferBucket(t *testing.T) {
	hidden, csv := bucketLog(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log.csv")
	require.NoError(t, os.WriteFile(logPath, []byte(csv), 0o644))
	out, stderr, code := run(t, "", "infer", "--format", "json", logPath)
	require.Equal(t, 0, code, stderr)
	var rep struct {
		Keys []struct {
			Rules    string
			Contract []struct {
				Kind          string
				Min           int
				Max           *int
				Burst         int
				RateMinPerDay int64 `json:"rate_min_per_day"`
				RateMaxPerDay int64 `json:"rate_max_per_day"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	k := rep.Keys[0]
	require.Len(t, k.Contract, 1, k.Rules)
	r := k.Contract[0]
	assert.Equal(t, "bucket", r.Kind)
	q := int64(hidden[0].Limit) * int64(24*time.Hour/hidden[0].Window)
	assert.True(t, r.RateMinPerDay <= q && q <= r.RateMaxPerDay, "%d a day in [%d, %d]", q, r.RateMinPerDay, r.RateMaxPerDay)
	require.NotNil(t, r.Max)
	assert.True(t, r.Min <= hidden[0].Burst && hidden[0].Burst <= *r.Max, "burst %d in [%d, %d]", hidden[0].Burst, r.Min, *r.Max)
	assert.Equal(t, "4/1s burst 8", k.Rules)
	var accepted strings.Builder
	for _, line := range strings.Split(csv, "\n")[1:] {
		if ts, st, ok := strings.Cut(line, ","); ok && st == "200" {
			accepted.WriteString(ts + "\n")
		}
	}
	acceptedPath := filepath.Join(dir, "accepted.txt")
	require.NoError(t, os.WriteFile(acceptedPath, []byte(accepted.String()), 0o644))
	_, stderr, code = run(t, "", "check", "--rules", k.Rules, "--unit", "ms", acceptedPath)
	assert.Equal(t, 0, code, "the accepted calls keep %s: %s", k.Rules, stderr)
}

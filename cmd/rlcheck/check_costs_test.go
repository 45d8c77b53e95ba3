package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// weighted is one send of TestCheckCostsAsTheIssueWritesIt's logs.
type weighted struct {
	ms     int64
	key    string
	tokens int64
}

// bruteWeighted counts the violations of "5/1s" and "100 tokens/1s" per
// the definition: the earlier sends of the key less than 1 s before, plus
// the send itself, over the limit (sends come in time order, ties in
// line order).
func bruteWeighted(sends []weighted) [2]int64 {
	var v [2]int64
	for i, s := range sends {
		calls, tokens := int64(1), s.tokens
		for _, e := range sends[:i] {
			if e.key == s.key && s.ms-e.ms < 1000 {
				calls++
				tokens += e.tokens
			}
		}
		if calls > 5 {
			v[0]++
		}
		if tokens > 100 {
			v[1]++
		}
	}
	return v
}

// TestCheckCostsAsTheIssueWritesIt: `rlcheck check --rules "5/1s, 100
// tokens/1s" --format json` on ts_ms,key,tokens reports per rule the
// violations the definition counts; so does the same log as JSON lines
// with the cost in a nested field named by --cost.
func TestCheckCostsAsTheIssueWritesIt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 100))
	dir := t.TempDir()
	for iter := range 20 {
		var sends []weighted
		ms := int64(1767225600000)
		csv := []string{"ts_ms,key,tokens"}
		var jsonl []string
		for range 200 {
			ms += []int64{0, 1000, rng.Int64N(300)}[rng.IntN(3)]
			s := weighted{ms, []string{"a", "b"}[rng.IntN(2)], []int64{0, 1, 100, 101, rng.Int64N(60)}[rng.IntN(5)]}
			sends = append(sends, s)
			csv = append(csv, fmt.Sprintf("%d,%s,%d", s.ms, s.key, s.tokens))
			jsonl = append(jsonl, fmt.Sprintf(`{"ts_ms":%d,"tenant":%q,"usage":{"total_tokens":%d}}`, s.ms, s.key, s.tokens))
		}
		var want [2]int64
		for _, key := range []string{"a", "b"} {
			var of []weighted
			for _, s := range sends {
				if s.key == key {
					of = append(of, s)
				}
			}
			w := bruteWeighted(of)
			want[0], want[1] = want[0]+w[0], want[1]+w[1]
		}
		csvPath, jsonPath := filepath.Join(dir, "sends.csv"), filepath.Join(dir, "sends.jsonl")
		require.NoError(t, os.WriteFile(csvPath, []byte(strings.Join(csv, "\n")+"\n"), 0o644))
		require.NoError(t, os.WriteFile(jsonPath, []byte(strings.Join(jsonl, "\n")+"\n"), 0o644))
		for _, args := range [][]string{
			{"--key-col", "key", csvPath},
			{"--key-field", "tenant", "--cost", "tokens=usage.total_tokens", jsonPath},
		} {
			full := append([]string{"check", "--rules", "5/1s, 100 tokens/1s", "--format", "json"}, args...)
			stdout, stderr, code := run(t, "", full...)
			var doc struct {
				Rules []struct {
					Rule       string `json:"rule"`
					Violations int64  `json:"violations"`
				} `json:"rules"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), "%v: %s", full, stderr)
			require.Len(t, doc.Rules, 2)
			assert.Equal(t, want, [2]int64{doc.Rules[0].Violations, doc.Rules[1].Violations}, "iter %d: %v", iter, full)
			assert.Equal(t, map[bool]int{true: 1, false: 0}[want[0]+want[1] > 0], code, "exit code")
		}
	}
}

// TestCheckCostsRefusals: a --cost that names no metered unit, no column,
// or a unit already given, is refused with the reason.
func TestCheckCostsRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cost", "points=p"}, `--cost "points=p": no rule meters points (the rules meter tokens)`},
		{[]string{"--cost", "tokens"}, `--cost "tokens": want UNIT=COLUMN`},
		// One parser for every command: a unit given twice is refused, not
		// read from the last flag.
		{[]string{"--cost", "tokens=a", "--cost", "tokens=b"}, `--cost "tokens=b": unit tokens given twice`},
	} {
		args := append([]string{"check", "--rules", "100 tokens/1s"}, c.args...)
		_, stderr, code := run(t, "ts_ms,tokens\n1,2\n", append(args, "-")...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, stderr, c.want, "%v", args)
	}
}

// TestCheckCostsListEachSendsCost: --list shows each window send's cost,
// in text and JSON, for cost rules only.
func TestCheckCostsListEachSendsCost(t *testing.T) {
	stdout, _, code := run(t, "", "check", "--rules", "5/1m, 100000 tokens/1m", "--key-col", "key", "--list", "1", "../../testdata/costs/llm.csv")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "  line 2  2026-01-01T00:00:00.000000000Z  30000 tokens\n  line 4  2026-01-01T00:00:05.000000000Z  45000 tokens\n")
	stdout, _, _ = run(t, "", "check", "--rules", "100000 tokens/1m", "--key-col", "key", "--list", "1", "--format", "json", "../../testdata/costs/llm.csv")
	var doc struct {
		Keys []struct {
			Key   string `json:"key"`
			Rules []struct {
				Listed []struct {
					Window      []json.RawMessage `json:"window"`
					WindowCosts []int64           `json:"window_costs"`
				} `json:"violations_listed"`
			} `json:"rules"`
		} `json:"keys"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.NotEmpty(t, doc.Keys)
	listed := doc.Keys[0].Rules[0].Listed
	require.Len(t, listed, 1)
	assert.Equal(t, []int64{30000, 45000, 20000, 9000}, listed[0].WindowCosts)
	assert.Len(t, listed[0].Window, 4)
	stdout, _, _ = run(t, "", "check", "--rules", "1/1m", "--list", "1", "../../testdata/costs/llm.csv")
	assert.NotContains(t, stdout, "tokens")
}

// TestContractHoldsTheSettlement: a contract names the estimate, actual
// and settlement columns (costs, actual, settled_col), and check with
// that contract alone judges the log as the flags do; a flag overrides
// the contract's column.
func TestContractHoldsTheSettlement(t *testing.T) {
	log := "../../testdata/reserved/sends.csv"
	flags, _, code := run(t, "", "check", "--rules", "100 tokens/1m", "--unit", "s", "--cost", "tokens=est_tokens", "--actual", "tokens=total_tokens", "--settled-col", "done_at", log)
	require.Equal(t, 1, code, flags)
	c := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(c, []byte("rules: [100 tokens/1m]\nunit: s\ncosts: {tokens: est_tokens}\nactual: {tokens: total_tokens}\nsettled_col: done_at\n"), 0o644))
	viaContract, stderr, code := run(t, "", "check", "--contract", c, log)
	require.Equal(t, 1, code, stderr)
	assert.Equal(t, flags, viaContract)
	estimates, _, _ := run(t, "", "check", "--contract", c, "--actual", "tokens=est_tokens", log)
	assert.NotEqual(t, flags, estimates, "--actual overrides the contract's actual column")

	require.NoError(t, os.WriteFile(c, []byte("rules: [100 tokens/1m]\ncosts: {tokens: est_tokens}\nactual: {tokens: total_tokens}\n"), 0o644))
	_, stderr, code = run(t, "", "check", "--contract", c, log)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "c.yaml:3: actual: needs the instant each send settled: give settled_col or settled_field")
}

package logcheck_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// shardLog is a CSV log in time order with ties, gaps of exactly one
// window and a few keys: its lines, header first.
func shardLog(rng *rand.Rand, n int, w int64) []string {
	lines := []string{"ts,tenant"}
	at := int64(1_767_225_600) * 1e9
	for range n {
		switch rng.IntN(6) {
		case 0:
		case 1:
			at += w
		case 2:
			at += w - 1
		default:
			at += rng.Int64N(w / 3)
		}
		lines = append(lines, fmt.Sprintf("%d,k%d", at, rng.IntN(3)))
	}
	return lines
}

func checkJSON(t *testing.T, lines []string, cfg logcheck.Config) []byte {
	t.Helper()
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(strings.Join(lines, "\n") + "\n")}}, cfg)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, logcheck.WriteJSON(&buf, []*logcheck.Result{res}, false))
	return buf.Bytes()
}

// verdictOf is a JSON report without what describes the input read.
func verdictOf(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	delete(m, "files")
	return m
}

// Checking time shards, each with the longest window of context before
// it, and merging their reports gives the report of the whole log.
func TestShardsMergeToWhole(t *testing.T) {
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 3, Window: time.Second}, {Limit: 6, Window: 4 * time.Second}}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 3))
		lines := shardLog(rng, 400+rng.IntN(400), int64(time.Second))
		b := rule.HalfOpen
		if seed%2 == 1 {
			b = rule.Closed
		}
		read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}
		if seed%3 != 0 {
			read.KeyCol = "tenant"
		}
		cfg := logcheck.Config{Rules: rules, Boundary: b, Read: read, MaxDisorder: time.Second, List: rng.IntN(12)}
		whole := checkJSON(t, lines, cfg)
		times := make([]int64, len(lines))
		for i, l := range lines[1:] {
			fmt.Sscanf(l, "%d,", &times[i+1])
		}
		first, last := times[1], times[len(times)-1]
		shards := 2 + int(seed%4)
		var docs [][]byte
		var names []string
		for k := range shards {
			sh := &logcheck.Shard{}
			from := first + (last-first)*int64(k)/int64(shards)
			to := first + (last-first)*int64(k+1)/int64(shards)
			start := 1 // the first data line of this shard's input
			if k > 0 {
				sh.From, sh.HasFrom = from, true
				// Context: every line from the longest window (and a
				// nanosecond, for closed windows) before From.
				for start < len(times) && times[start] < from-int64(4*time.Second)-1 {
					start++
				}
				start = max(start-1, 1)
			}
			if k < shards-1 {
				sh.To, sh.HasTo = to, true
			}
			sh.LineOffset = int64(start - 1)
			cfg.Shard = sh
			input := append([]string{lines[0]}, lines[start:]...)
			doc := checkJSON(t, input, cfg)
			assertListsJudged(t, doc, cfg.List)
			docs = append(docs, doc)
			names = append(names, fmt.Sprintf("shard%d.json", k))
		}
		merged, err := logcheck.Merge(names, docs, cfg.List)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, logcheck.WriteJSON(&buf, []*logcheck.Result{merged}, false))
		assert.Equal(t, verdictOf(t, whole), verdictOf(t, buf.Bytes()), "seed %d, %d shards, %s", seed, shards, b)
	}
}

// assertListsJudged checks that a shard lists its first judged violations:
// as many as it found, up to list, whatever its context held.
func assertListsJudged(t *testing.T, doc []byte, list int) {
	t.Helper()
	var r struct {
		Rules []ruleJSON
		Keys  []struct{ Rules []ruleJSON }
	}
	require.NoError(t, json.Unmarshal(doc, &r))
	rules := r.Rules
	if len(r.Keys) > 0 {
		rules = nil
		for _, k := range r.Keys {
			rules = append(rules, k.Rules...)
		}
	}
	for _, rr := range rules {
		assert.Len(t, rr.Listed, int(min(int64(list), rr.Violations)), "rule %s", rr.Rule)
	}
}

type ruleJSON struct {
	Rule       string
	Violations int64
	Listed     []any `json:"violations_listed"`
}

func TestShardWithoutContextIsAnError(t *testing.T) {
	lines := []string{"ts", "10000000000", "10500000000", "12000000000"}
	_, err := logcheck.Run([]logcheck.Input{{Name: "s.csv", R: strings.NewReader(strings.Join(lines, "\n"))}}, logcheck.Config{
		Rules: []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 5, Window: 3 * time.Second}},
		Read:  sendlog.Options{Format: sendlog.FormatCSV, Unit: sendlog.UnitNanos},
		Shard: &logcheck.Shard{From: 12e9, HasFrom: true},
	})
	var ce *logcheck.ShardContextError
	require.True(t, errors.As(err, &ce), "err %v", err)
	assert.Equal(t, time.Second, ce.Missing) // the input starts 2 s before From; 3 s are needed
	assert.Contains(t, err.Error(), "1s of context is missing")
}

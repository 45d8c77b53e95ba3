package merge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/merge"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// shardLog is a CSV log in time order with ties, gaps of exactly one
// window, a few keys and call durations (ns), a few of them long: its
// lines, header first, and the longest duration.
func shardLog(rng *rand.Rand, n int, w int64) ([]string, int64) {
	lines := []string{"ts,tenant,took"}
	at := int64(1_767_225_600) * 1e9
	var longest int64
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
		took := rng.Int64N(w / 2)
		switch rng.IntN(40) {
		case 0:
			took = rng.Int64N(20 * w) // beyond the longest window
		case 1:
			took = 0
		}
		longest = max(longest, took)
		lines = append(lines, fmt.Sprintf("%d,k%d,%d", at, rng.IntN(3), took))
	}
	return lines, longest
}

func checkJSON(t *testing.T, lines []string, cfg logcheck.Config) []byte {
	t.Helper()
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(strings.Join(lines, "\n") + "\n")}}, cfg)
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
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

// Checking time shards split at random points, each with the longest
// window of context before it, and merging their reports gives the report
// of the whole log, listed violations and the in-flight cap included. With
// calls longer than that context, the merge is exact or an error that
// says how much context is missing; with context for the longest call, it
// is exact.
func TestShardsMergeToWhole(t *testing.T) {
	rules := []rule.Rule{{Limit: 1, Window: time.Second}, {Limit: 3, Window: time.Second}, {Limit: 6, Window: 4 * time.Second}}
	longestWindow := int64(4 * time.Second)
	refused := 0
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 3))
		lines, longestCall := shardLog(rng, 400+rng.IntN(400), int64(time.Second))
		b := rule.HalfOpen
		if seed%2 == 1 {
			b = rule.Closed
		}
		read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}
		if seed%3 != 0 {
			read.KeyCol = "tenant"
		}
		cfg := logcheck.Config{Rules: rules, Boundary: b, Read: read, MaxDisorder: time.Second, List: rng.IntN(12)}
		if seed%4 != 3 {
			read.DurationCol, read.DurationUnit = "took", sendlog.UnitNanos
			cfg.Read, cfg.MaxInFlight = read, 1+rng.IntN(4)
		}
		whole := checkJSON(t, lines, cfg)
		times := make([]int64, len(lines))
		for i, l := range lines[1:] {
			fmt.Sscanf(l, "%d,", &times[i+1])
		}
		first, last := times[1], times[len(times)-1]
		shards := 2 + int(seed%4)
		bounds := []int64{first}
		for range shards - 1 {
			bounds = append(bounds, first+1+rng.Int64N(last-first))
		}
		slices.Sort(bounds)
		bounds = slices.Compact(bounds)
		name := fmt.Sprintf("seed %d, %d shards, %s, in-flight cap %d, list %d", seed, len(bounds), b, cfg.MaxInFlight, cfg.List)
		for _, context := range []int64{longestWindow, max(longestWindow, longestCall)} {
			docs, names := shardReports(t, lines, times, bounds, context+1, cfg)
			merged, err := merge.Reports(names, docs, merge.Options{List: cfg.List})
			if err != nil {
				require.Less(t, context, longestCall, "%s: %v", name, err)
				require.Contains(t, err.Error(), "still in flight at it", name)
				refused++
				continue
			}
			var buf bytes.Buffer
			require.NoError(t, report.Write(&buf, []*report.Result{merged}, report.Options{Format: "json"}))
			assert.Equal(t, verdictOf(t, whole), verdictOf(t, buf.Bytes()), "%s, context %v", name, time.Duration(context))
		}
	}
	assert.Positive(t, refused, "no seed had a call longer than the context")
}

// shardReports checks the log in shards starting at bounds, each input
// holding the lines from context before its start, and returns their JSON
// reports.
func shardReports(t *testing.T, lines []string, times []int64, bounds []int64, context int64, cfg logcheck.Config) (docs [][]byte, names []string) {
	t.Helper()
	for k, from := range bounds {
		sh := &report.Shard{}
		start := 1 // the first data line of this shard's input
		if k > 0 {
			sh.From, sh.HasFrom = from, true
			for start < len(times) && times[start] < from-context {
				start++
			}
			start = max(start-1, 1)
		}
		if k < len(bounds)-1 {
			sh.To, sh.HasTo = bounds[k+1], true
		}
		sh.LineOffset = int64(start - 1)
		cfg.Shard = sh
		input := append([]string{lines[0]}, lines[start:]...)
		doc := checkJSON(t, input, cfg)
		assertListsJudged(t, doc, cfg.List)
		docs = append(docs, doc)
		names = append(names, fmt.Sprintf("shard%d.json", k))
	}
	return docs, names
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
		Shard: &report.Shard{From: 12e9, HasFrom: true},
	})
	var ce *logcheck.ShardContextError
	require.True(t, errors.As(err, &ce), "err %v", err)
	assert.Equal(t, time.Second, ce.Missing) // the input starts 2 s before From; 3 s are needed
	assert.Contains(t, err.Error(), "1s of context is missing")
}

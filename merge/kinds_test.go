package merge_test

import (
	"bytes"
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

// costLog is a CSV log in time order (ts,tenant,tokens) that starts a
// minute before midnight in New York, with ties, gaps of exactly one
// window, sends on fixed windows' edges, and costs of 0, the cost rule's
// limit and one more.
func costLog(rng *rand.Rand, n int, w, limit int64) ([]string, []int64) {
	lines := []string{"ts,tenant,tokens"}
	times := []int64{0} // times[i] is line i's
	at := time.Date(2026, 1, 1, 4, 59, 0, 0, time.UTC).UnixNano()
	for range n {
		switch rng.IntN(7) {
		case 0:
		case 1:
			at += w
		case 2:
			at += w - 1
		case 3:
			at += w - at%w // a fixed window's edge
		default:
			at += rng.Int64N(w / 3)
		}
		cost := rng.Int64N(4)
		switch rng.IntN(12) {
		case 0:
			cost = 0
		case 1:
			cost = limit
		case 2:
			cost = limit + 1
		}
		lines = append(lines, fmt.Sprintf("%d,k%d,%d", at, rng.IntN(3), cost))
		times = append(times, at)
	}
	return lines, times
}

// needFrom is how far before from a shard's input must start for rules:
// the longest sliding window, and each fixed rule's window back to before
// its start; ok is false when a rule needs the whole log before from.
func needFrom(t *testing.T, rules []rule.Rule, b rule.Boundary, from int64) (need int64, ok bool) {
	for _, r := range rules {
		n := int64(r.Window)
		switch r.Kind {
		case rule.Bucket, rule.FirstCall:
			return 0, false
		case rule.Fixed:
			start, err := r.FixedStart(from)
			require.NoError(t, err)
			n = from - start + 1
		default:
			if b == rule.Closed {
				n++
			}
		}
		need = max(need, n)
	}
	return need, true
}

// Checking time shards of a log with cost rules and every window kind,
// split at random points, and merging their reports gives the report of
// the whole log, listed violations included. Each shard's input starts as
// late as its rules allow: the longest sliding window before it, back to
// the start of each fixed rule's window that holds its start, and, for a
// bucket or first-call rule, at the log's first line.
func TestShardsMergeToWholeCostsAndKinds(t *testing.T) {
	ruleSets := [][]string{
		{"10 tokens/1s", "3/1s fixed", "25 tokens/3s fixed at 500ms"},
		{"10 tokens/1s", "2/1s", "400/1d fixed at 00:00 America/New_York", "900 tokens/1d fixed at 00:00 America/New_York"},
		{"3/1s burst 5", "10 tokens/1s burst 15", "4/2s first-call", "10 tokens/1s first-call", "10 tokens/2s fixed"},
	}
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 17))
		var rules []rule.Rule
		for _, text := range ruleSets[seed%3] {
			r, err := rule.Parse(text)
			require.NoError(t, err)
			rules = append(rules, r)
		}
		lines, times := costLog(rng, 300+rng.IntN(400), int64(time.Second), 10)
		b := rule.HalfOpen
		if seed%2 == 1 {
			b = rule.Closed
		}
		read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos,
			Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}}
		if seed%4 < 2 {
			read.KeyCol = "tenant"
		}
		cfg := logcheck.Config{Rules: rules, Boundary: b, Read: read, List: rng.IntN(6)}
		whole := checkJSON(t, lines, cfg)
		first, last := times[1], times[len(times)-1]
		bounds := []int64{first}
		for range 1 + int(seed%4) {
			bounds = append(bounds, first+1+rng.Int64N(last-first))
		}
		slices.Sort(bounds)
		bounds = slices.Compact(bounds)
		name := fmt.Sprintf("seed %d, rules %v, %d shards, %s, keyed %v, list %d", seed, rules, len(bounds), b, read.KeyCol != "", cfg.List)
		var docs [][]byte
		var names []string
		for k, from := range bounds {
			sh := &report.Shard{}
			start := 1
			if k > 0 {
				sh.From, sh.HasFrom = from, true
				if need, ok := needFrom(t, rules, b, from); ok {
					for start < len(times) && times[start] < from-need {
						start++
					}
					start = max(start-1, 1) // the line before shows nothing is missing
				}
				sh.LogStart = start == 1
			}
			if k < len(bounds)-1 {
				sh.To, sh.HasTo = bounds[k+1], true
			}
			sh.LineOffset = int64(start - 1)
			c := cfg
			c.Shard = sh
			input := append([]string{lines[0]}, lines[start:]...)
			doc := checkJSON(t, input, c)
			assertListsJudged(t, doc, cfg.List)
			docs, names = append(docs, doc), append(names, fmt.Sprintf("shard%d.json", k))
		}
		merged, err := merge.Reports(names, docs, merge.Options{List: cfg.List})
		require.NoError(t, err, name)
		var buf bytes.Buffer
		require.NoError(t, report.Write(&buf, []*report.Result{merged}, report.Options{Format: "json"}))
		assert.Equal(t, verdictOf(t, whole), verdictOf(t, buf.Bytes()), name)
	}
}

// A shard whose input starts after the start of a fixed rule's window
// that holds its start is refused, naming the rule and that start; one of
// a bucket or first-call rule is refused unless its input starts the log.
func TestShardContextOfKinds(t *testing.T) {
	lines := []string{"ts", "5400000000000", "5450000000000", "5500000000000"} // 1:30:00, 1:30:50, 1:31:40
	run := func(text string, sh report.Shard) error {
		_, err := logcheck.Run([]logcheck.Input{{Name: "s.csv", R: strings.NewReader(strings.Join(lines, "\n"))}}, logcheck.Config{
			Rules: []rule.Rule{{Limit: 1, Window: time.Second}, mustParse(t, text)},
			Read:  sendlog.Options{Format: sendlog.FormatCSV, Unit: sendlog.UnitNanos},
			Shard: &sh,
		})
		return err
	}
	from := int64(5500 * time.Second)
	// The window from 1:30 holds From: an input that starts at it may have
	// lost sends tied at 1:30, so it must start before.
	err := run("5/1h fixed at 00:30", report.Shard{From: from, HasFrom: true})
	var ce *logcheck.ShardContextError
	require.True(t, errors.As(err, &ce), "err %v", err)
	assert.Equal(t, time.Nanosecond, ce.Missing)
	assert.Contains(t, err.Error(), "the window of 5/1h fixed at 00:30 that holds it starts at 5400.000000000 s")
	lines = slices.Insert(lines, 1, "5399999999999")
	require.NoError(t, run("5/1h fixed at 00:30", report.Shard{From: from, HasFrom: true}), "a send before 1:30 shows none is missing")
	err = run("5/1h fixed", report.Shard{From: from, HasFrom: true})
	require.True(t, errors.As(err, &ce), "err %v", err)
	assert.Equal(t, 30*time.Minute, ce.Missing) // the window from 1:00 holds From: the input must start before it
	assert.Contains(t, err.Error(), "the window of 5/1h fixed that holds it starts at")
	for _, text := range []string{"5/1h burst 9", "5/1h first-call"} {
		err := run(text, report.Shard{From: from, HasFrom: true})
		var he *logcheck.ShardHistoryError
		require.True(t, errors.As(err, &he), "%s: err %v", text, err)
		assert.Contains(t, err.Error(), "depends on every earlier send of the log", text)
		assert.NoError(t, run(text, report.Shard{From: from, HasFrom: true, LogStart: true}), text)
		assert.NoError(t, run(text, report.Shard{To: from, HasTo: true}), "%s: a shard from the log's start", text)
	}
}

// TestFixedShardKeepsTiesAtItsWindowStart: a shard whose input starts
// exactly at the start of the fixed window that holds its From may have
// lost the sends tied there, earlier in the log; it is refused, as the
// whole log's violations would otherwise merge to none.
func TestFixedShardKeepsTiesAtItsWindowStart(t *testing.T) {
	lines := []string{"ts", "1000000000", "1000000000", "1000000000", "1500000000", "1600000000"}
	cfg := logcheck.Config{Rules: []rule.Rule{mustParse(t, "3/1s fixed")},
		Read: sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}}
	whole := checkJSON(t, lines, cfg)
	assert.EqualValues(t, 2, verdictOf(t, whole)["violations"])
	a, b := cfg, cfg
	a.Shard = &report.Shard{To: 1_500_000_000, HasTo: true}
	b.Shard = &report.Shard{From: 1_500_000_000, HasFrom: true, LineOffset: 2}
	late := append([]string{"ts"}, lines[3:]...) // from the third send at 1 s
	_, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(strings.Join(late, "\n") + "\n")}}, b)
	var ce *logcheck.ShardContextError
	require.True(t, errors.As(err, &ce), "err %v", err)
	assert.Contains(t, err.Error(), "the window of 3/1s fixed that holds it starts at 1.000000000 s")
	b.Shard.LineOffset, b.Shard.LogStart = 0, true
	docs := [][]byte{checkJSON(t, lines, a), checkJSON(t, lines, b)}
	got, err := merge.Reports([]string{"a.json", "b.json"}, docs, merge.Options{})
	require.NoError(t, err)
	assert.EqualValues(t, 2, got.Violations())
}

func mustParse(t *testing.T, text string) rule.Rule {
	t.Helper()
	r, err := rule.Parse(text)
	require.NoError(t, err)
	return r
}

// merge compared rules by limit and window alone, so shards of 3/1s and
// of 3/1s fixed (or 3 tokens/1s) added up; it refuses them, naming both.
func TestMergeRefusesShardsOfAnotherKindOrUnit(t *testing.T) {
	lines := []string{"ts,tokens", "0,1", "100000000,2", "2000000000,1", "2100000000,5"}
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos,
		Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}}
	shard := func(text string, sh report.Shard) []byte {
		return checkJSON(t, lines, logcheck.Config{Rules: []rule.Rule{mustParse(t, text)}, Read: read, Shard: &sh})
	}
	first := shard("3/1s", report.Shard{To: 2e9, HasTo: true})
	for _, other := range []string{"3/1s fixed", "3 tokens/1s", "3/1s burst 4"} {
		second := shard(other, report.Shard{From: 2e9, HasFrom: true, LogStart: true})
		_, err := merge.Reports([]string{"a.json", "b.json"}, [][]byte{first, second}, merge.Options{})
		require.Error(t, err, other)
		assert.Contains(t, err.Error(), "b.json: checks "+other+", but a.json checks 3/1s", other)
	}
	// The same rule in both merges.
	second := shard("3/1s", report.Shard{From: 2e9, HasFrom: true, LogStart: true})
	_, err := merge.Reports([]string{"a.json", "b.json"}, [][]byte{first, second}, merge.Options{})
	assert.NoError(t, err)
}

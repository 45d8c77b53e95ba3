package merge_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// mergeLog is a small log, its send times (index 0 is the header's) and
// the config that checks it, per key or not, listing violations or not.
func mergeLog(rng *rand.Rand, perKey bool) ([]string, []int64, logcheck.Config) {
	rules := []rule.Rule{{Limit: 2, Window: time.Second}, {Limit: 5, Window: 3 * time.Second}}
	lines, _ := shardLog(rng, 40+rng.IntN(80), int64(time.Second))
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}
	if perKey {
		read.KeyCol = "tenant"
	}
	times := make([]int64, len(lines))
	for i, l := range lines[1:] {
		fmt.Sscanf(l, "%d,", &times[i+1])
	}
	return lines, times, logcheck.Config{Rules: rules, Read: read, MaxDisorder: time.Second, List: rng.IntN(4)}
}

// cut returns k-1 random bounds strictly inside the log, in order.
func cut(rng *rand.Rand, times []int64, k int) []int64 {
	first, last := times[1], times[len(times)-1]
	bounds := []int64{first}
	for range k - 1 {
		bounds = append(bounds, first+1+rng.Int64N(last-first))
	}
	slices.Sort(bounds)
	return slices.Compact(bounds)
}

// merged merges docs and returns the report as JSON.
func merged(t *testing.T, docs [][]byte, opt merge.Options) ([]byte, error) {
	t.Helper()
	names := make([]string, len(docs))
	for i := range docs {
		names[i] = fmt.Sprintf("shard%d.json", i)
	}
	res, err := merge.Reports(names, docs, opt)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	require.NoError(t, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
	return buf.Bytes(), nil
}

// edit decodes a report, changes it and encodes it again.
func edit(t *testing.T, doc []byte, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(doc, &m))
	change(m)
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// ruleOf is the first rule report of a report with a violation of it (the
// key's, per key), or the first.
func ruleOf(m map[string]any) map[string]any {
	scopes := []any{m}
	if keys, ok := m["keys"].([]any); ok {
		scopes = keys
	}
	var first map[string]any
	for _, s := range scopes {
		for _, r := range s.(map[string]any)["rules"].([]any) {
			rr := r.(map[string]any)
			if first == nil {
				first = rr
			}
			if rr["violations"].(float64) > 0 {
				return rr
			}
		}
	}
	return first
}

func mergeErrorOf(t *testing.T, err error) *merge.Error {
	t.Helper()
	var me *merge.Error
	require.True(t, errors.As(err, &me), "want a *MergeError, got %v", err)
	return me
}

// The cases: duplicated, overlapping, missing and edited shards
// were added up; each is refused now, naming the shard and the reason.
func TestMergeRefusesShardsThatDoNotTile(t *testing.T) {
	lines := []string{"ts"}
	for i := range 30 {
		lines = append(lines, fmt.Sprint(int64(i)*int64(200*time.Millisecond)))
	}
	cfg := logcheck.Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, Read: sendlog.Options{Format: sendlog.FormatCSV, Unit: sendlog.UnitNanos}}
	shard := func(sh *report.Shard) []byte {
		c := cfg
		c.Shard = sh
		return checkJSON(t, lines, c)
	}
	s2, s4 := int64(2*time.Second), int64(4*time.Second)
	whole := checkJSON(t, lines, cfg)
	a := shard(&report.Shard{To: s2, HasTo: true})
	b := shard(&report.Shard{From: s2, HasFrom: true, To: s4, HasTo: true, LogStart: true})
	c := shard(&report.Shard{From: s4, HasFrom: true, LogStart: true})
	bWide := shard(&report.Shard{From: s2 - 1, HasFrom: true, To: s4, HasTo: true, LogStart: true})
	other := shard(&report.Shard{From: s2, HasFrom: true, To: s4, HasTo: true, LogStart: true})
	other = edit(t, other, func(m map[string]any) { m["version"] = "v0.0.1" })

	got, err := merged(t, [][]byte{c, a, b}, merge.Options{})
	require.NoError(t, err)
	assert.Equal(t, verdictOf(t, whole), verdictOf(t, got))
	// A last shard that ends after the log's last send judged it.
	cEnd := shard(&report.Shard{From: s4, HasFrom: true, To: 10 * s2, HasTo: true, LogStart: true})
	got, err = merged(t, [][]byte{a, b, cEnd}, merge.Options{})
	require.NoError(t, err)
	assert.Equal(t, verdictOf(t, whole), verdictOf(t, got))

	for _, tc := range []struct {
		name   string
		docs   [][]byte
		opt    merge.Options
		shard  string // the report named
		reason string
		gap    bool
	}{
		{"a duplicated shard", [][]byte{a, a, b, c}, merge.Options{}, "shard1.json", "a duplicate of shard0.json", false},
		{"a duplicated whole", [][]byte{whole, whole}, merge.Options{}, "shard1.json", "a duplicate of shard0.json", false},
		{"a whole and a shard", [][]byte{whole, b}, merge.Options{}, "shard1.json", "overlaps shard0.json", false},
		{"overlapping shards", [][]byte{a, bWide, c}, merge.Options{}, "shard1.json", "would count twice", false},
		{"overlap in a subset", [][]byte{a, bWide}, merge.Options{Subset: true}, "shard1.json", "overlaps shard0.json", false},
		{"the start missing", [][]byte{b, c}, merge.Options{}, "shard0.json", "the sends before", true},
		{"the end missing", [][]byte{a, b}, merge.Options{}, "shard1.json", "are in no report", true},
		{"a middle missing", [][]byte{a, c}, merge.Options{}, "shard1.json", "are in no report", true},
		{"another version", [][]byte{a, other, c}, merge.Options{}, "shard1.json", "made by rlcheck v0.0.1", false},
		{"negative violations", [][]byte{a, b, edit(t, c, func(m map[string]any) { m["violations"] = -15 })}, merge.Options{}, "shard2.json", "violations is -15", false},
		{"a rule's negative violations", [][]byte{a, b, edit(t, c, func(m map[string]any) { ruleOf(m)["violations"] = -15 })}, merge.Options{}, "shard2.json", "contradicts itself", false},
		{"a negative line", [][]byte{a, b, edit(t, c, func(m map[string]any) {
			ruleOf(m)["first_violation"].(map[string]any)["line"] = -1
		})}, merge.Options{}, "shard2.json", "a violation on line -1", false},
		{"violations within the limit", [][]byte{a, b, edit(t, c, func(m map[string]any) { ruleOf(m)["max_in_window"] = 2 })}, merge.Options{}, "shard2.json", "within the limit of 2", false},
		{"other rules", [][]byte{a, b, edit(t, c, func(m map[string]any) {
			r := ruleOf(m)
			r["rule"], r["limit"] = "3/1s", 3
		})}, merge.Options{}, "shard2.json", "checks 3/1s, but shard0.json checks 2/1s", false},
		{"other inputs", [][]byte{a, b, edit(t, c, func(m map[string]any) {
			m["files"].([]any)[0].(map[string]any)["name"] = "other.csv"
		})}, merge.Options{}, "shard2.json", "read other.csv, but shard0.json read sends.csv", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := merged(t, tc.docs, tc.opt)
			me := mergeErrorOf(t, err)
			assert.Equal(t, tc.shard, me.Name, "%v", err)
			assert.Contains(t, me.Reason, tc.reason)
			assert.Equal(t, tc.gap, me.Gap, "%v", err)
		})
	}

	// A deliberate subset: the gaps are accepted, the sends are the shards'.
	got, err = merged(t, [][]byte{a, c}, merge.Options{Subset: true})
	require.NoError(t, err)
	var r struct{ Sends int64 }
	require.NoError(t, json.Unmarshal(got, &r))
	var ra, rc struct{ Sends int64 }
	require.NoError(t, json.Unmarshal(a, &ra))
	require.NoError(t, json.Unmarshal(c, &rc))
	assert.Equal(t, ra.Sends+rc.Sends, r.Sends)
}

// A log shorter than its longest window cut into shards, each input the
// log from its first line: the shards state it (LogStart) and merge into
// the whole log's report. Without the statement, every shard after the
// first is refused.
func TestShardsOfALogShorterThanItsWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	lines, times, cfg := mergeLog(rng, true)
	cfg.Rules = append(cfg.Rules, rule.Rule{Limit: 30, Window: 24 * time.Hour})
	require.Less(t, times[len(times)-1]-times[1], int64(24*time.Hour))
	whole := checkJSON(t, lines, cfg)
	bounds := cut(rng, times, 4)
	bounds[0] = times[1] // from the log's own first instant
	var docs [][]byte
	for k, from := range bounds {
		sh := &report.Shard{From: from, HasFrom: true}
		if k < len(bounds)-1 {
			sh.To, sh.HasTo = bounds[k+1], true
		}
		c := cfg
		c.Shard = sh
		_, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(strings.Join(lines, "\n") + "\n")}}, c)
		var ce *logcheck.ShardContextError
		require.True(t, errors.As(err, &ce), "shard %d: %v", k, err)
		assert.Contains(t, err.Error(), "the input starts the log")
		sh.LogStart = true
		docs = append(docs, checkJSON(t, lines, c))
	}
	got, err := merged(t, docs, merge.Options{List: cfg.List})
	require.NoError(t, err)
	assert.Equal(t, verdictOf(t, whole), verdictOf(t, got))
}

// mutations spoil a valid set of shard reports in a way merge must
// refuse; each returns the spoiled set, or nil when it does not apply.
var mutations = []struct {
	name   string
	spoil  func(rng *rand.Rand, docs [][]byte, t *testing.T) [][]byte
	reason string
}{
	{"duplicate", func(rng *rand.Rand, docs [][]byte, _ *testing.T) [][]byte {
		return slices.Insert(slices.Clone(docs), rng.IntN(len(docs)+1), docs[rng.IntN(len(docs))])
	}, "duplicate"},
	{"drop", func(rng *rand.Rand, docs [][]byte, _ *testing.T) [][]byte {
		if len(docs) < 2 {
			return nil
		}
		i := rng.IntN(len(docs))
		return slices.Delete(slices.Clone(docs), i, i+1)
	}, "in no report"},
	{"negative", func(rng *rand.Rand, docs [][]byte, t *testing.T) [][]byte {
		out := slices.Clone(docs)
		i := rng.IntN(len(docs))
		fields := []string{"sends", "violations", "max_in_window"}
		f := fields[rng.IntN(len(fields))]
		out[i] = edit(t, docs[i], func(m map[string]any) {
			if f == "max_in_window" {
				ruleOf(m)[f] = -1 - float64(rng.IntN(20))
				return
			}
			m[f] = -1 - float64(rng.IntN(20))
		})
		return out
	}, "contradicts itself"},
	{"recount", func(rng *rand.Rand, docs [][]byte, t *testing.T) [][]byte {
		out := slices.Clone(docs)
		i := rng.IntN(len(docs))
		out[i] = edit(t, docs[i], func(m map[string]any) {
			r := ruleOf(m)
			r["violations"] = r["violations"].(float64) + 1 + float64(rng.IntN(5))
		})
		return out
	}, "contradicts itself"},
}

// mergeCase checks random shards of a random log: as cut they merge to
// the whole log's report; overlapping bounds, or one mutation applied, are
// refused.
func mergeCase(t *testing.T, seed uint64, op uint8) {
	rng := rand.New(rand.NewPCG(seed, 11))
	lines, times, cfg := mergeLog(rng, seed%2 == 0)
	bounds := cut(rng, times, 1+rng.IntN(4))
	shards := func(bounds []int64) [][]byte {
		var docs [][]byte
		for k, from := range bounds {
			sh := &report.Shard{}
			if k > 0 {
				sh.From, sh.HasFrom, sh.LogStart = from, true, true
			}
			if k < len(bounds)-1 {
				sh.To, sh.HasTo = bounds[k+1], true
			}
			c := cfg
			c.Shard = sh
			docs = append(docs, checkJSON(t, lines, c))
		}
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		return docs
	}
	docs := shards(bounds)
	opt := merge.Options{List: cfg.List}
	switch k := int(op) % (len(mutations) + 2); {
	case k == 0:
		got, err := merged(t, docs, opt)
		require.NoError(t, err)
		assert.Equal(t, verdictOf(t, checkJSON(t, lines, cfg)), verdictOf(t, got))
	case k == 1 && len(bounds) > 1:
		// One shard's start moved earlier: it overlaps the one before.
		i := 1 + rng.IntN(len(bounds)-1)
		if bounds[i]-1 <= bounds[i-1] {
			return
		}
		over := shards(slices.Clone(bounds))
		moved := slices.Clone(bounds)
		moved[i]--
		docs = append(over, shards(moved)...)
		_, err := merged(t, docs, opt)
		me := mergeErrorOf(t, err)
		assert.False(t, me.Gap, "%v", err)
	case k >= 2:
		m := mutations[k-2]
		spoiled := m.spoil(rng, docs, t)
		if spoiled == nil {
			return
		}
		_, err := merged(t, spoiled, opt)
		me := mergeErrorOf(t, err)
		assert.Contains(t, me.Reason, m.reason, "%s", m.name)
	}
}

func TestMergeRandomShards(t *testing.T) {
	for seed := range uint64(24) {
		for op := range uint8(len(mutations) + 2) {
			t.Run(fmt.Sprintf("seed %d op %d", seed, op), func(t *testing.T) { mergeCase(t, seed, op) })
		}
	}
}

func FuzzMergeShards(f *testing.F) {
	for op := range uint8(len(mutations) + 2) {
		f.Add(uint64(op), op)
	}
	f.Fuzz(mergeCase)
}

// Whatever the documents hold, Merge returns a report or an error: never
// a panic.
func FuzzMergeDocuments(f *testing.F) {
	lines := []string{"ts,tenant", "0,a", "100,a", "200,b", "1000000000,a"}
	cfg := logcheck.Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}},
		Read: sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", KeyCol: "tenant", Unit: sendlog.UnitNanos}, List: 2}
	var buf bytes.Buffer
	res, err := logcheck.Run([]logcheck.Input{{Name: "s.csv", R: strings.NewReader(strings.Join(lines, "\n"))}}, cfg)
	require.NoError(f, err)
	require.NoError(f, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
	f.Add(buf.Bytes(), []byte(`{}`))
	f.Add(buf.Bytes(), buf.Bytes())
	f.Add([]byte(`{"schema_version":1,"version":"x","rules":[],"boundary":"half-open","keys":[{"rules":[{}]}]}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		res, err := merge.Reports([]string{"a", "b"}, [][]byte{a, b}, merge.Options{List: 2, Subset: true})
		if err == nil {
			assert.NotNil(t, res)
		}
	})
}

// setCounts decodes a report, sets its sends and violations and its first
// rule's violations to n, and encodes it again; JSON numbers through
// float64 would not hold n exactly.
func setCounts(t *testing.T, doc []byte, n int64) []byte {
	t.Helper()
	var d report.Doc
	require.NoError(t, json.Unmarshal(doc, &d))
	d.Sends, d.Total, d.Rules[0].Violations = n, n, n
	out, err := json.Marshal(d)
	require.NoError(t, err)
	return out
}

// TestMergeRefusesSumsPastInt64: a shard whose counts carry a sum past
// int64 is refused with its name, rather than wrapped into a negative
// count and an OK verdict; so are negative counts.
func TestMergeRefusesSumsPastInt64(t *testing.T) {
	lines := []string{"ts", "0", "100000000", "200000000", "300000000"}
	cfg := logcheck.Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}},
		Read: sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos}}
	a, b := cfg, cfg
	a.Shard = &report.Shard{To: 200_000_000, HasTo: true}
	b.Shard = &report.Shard{From: 200_000_000, HasFrom: true, LogStart: true}
	docs := [][]byte{checkJSON(t, lines, a), setCounts(t, checkJSON(t, lines, b), math.MaxInt64)}
	_, err := merged(t, docs, merge.Options{})
	require.Error(t, err)
	me := mergeErrorOf(t, err)
	assert.Equal(t, "shard1.json", me.Name)
	assert.Contains(t, me.Reason, "past 9223372036854775807")

	neg := edit(t, checkJSON(t, lines, b), func(m map[string]any) {
		ruleOf(m)["first_violation"].(map[string]any)["count"] = -3
	})
	_, err = merged(t, [][]byte{docs[0], neg}, merge.Options{})
	require.Error(t, err)
	assert.Contains(t, mergeErrorOf(t, err).Reason, "a count of -3")

	early := edit(t, checkJSON(t, lines, a), func(m map[string]any) { m["first_ns"] = -9e18 })
	_, err = merged(t, [][]byte{early, checkJSON(t, lines, b)}, merge.Options{})
	require.Error(t, err, "a span of the log past int64 would print a negative duration")
	assert.Contains(t, mergeErrorOf(t, err).Reason, "first_ns -9000000000000000000")
}

// A log split per key can have a quiet shard that judges no send: its
// report names no key, but its rules carry the per-key totals' count of
// keys with violations. It merges with the others into the whole log's
// report instead of being refused as "split per key: false".
func TestMergeKeyedShardWithNoSends(t *testing.T) {
	lines := []string{"ts,tenant", "0,a", "100000000,a", "200000000,b", "9000000000,b", "9100000000,b"}
	read := sendlog.Options{Format: sendlog.FormatCSV, TimeCol: "ts", Unit: sendlog.UnitNanos, KeyCol: "tenant"}
	cfg := logcheck.Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}}, Read: read, List: 2}
	whole := checkJSON(t, lines, cfg)
	var docs [][]byte
	for _, sh := range []report.Shard{
		{To: 1e9, HasTo: true},
		{From: 1e9, HasFrom: true, To: 5e9, HasTo: true, LogStart: true}, // no send in [1 s, 5 s)
		{From: 5e9, HasFrom: true, LogStart: true},
	} {
		cfg.Shard = &sh
		docs = append(docs, checkJSON(t, lines, cfg))
	}
	for _, order := range [][]int{{0, 1, 2}, {1, 0, 2}} { // the quiet shard first, too
		doc, err := merged(t, [][]byte{docs[order[0]], docs[order[1]], docs[order[2]]}, merge.Options{List: 2})
		require.NoError(t, err, "order %v", order)
		assert.Equal(t, verdictOf(t, whole), verdictOf(t, doc), "order %v", order)
	}
}

package watch

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// watchOnce reads the files once, as a run whose context has ended.
func watchOnce(t *testing.T, rulesText string, read sendlog.Options, json bool, paths ...string) (*Summary, string) {
	t.Helper()
	rules, err := rule.ParseList(rulesText)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	sum, err := Run(ctx, Config{Rules: rules, Read: read, Paths: paths, Out: &out, JSON: json})
	require.NoError(t, err)
	return sum, out.String()
}

// TestWatchJudgesKinds: the sends at 0.9 to 1.1 s keep "3/1s fixed"
// and break "3/1s" three times; a bucket of 4 refilled 2 a second breaks
// on the fifth send at 0.4 s and holds at 0.5 s.
func TestWatchJudgesKinds(t *testing.T) {
	dir := t.TempDir()
	edge := filepath.Join(dir, "edge.txt")
	require.NoError(t, os.WriteFile(edge, []byte("0.9\n0.95\n0.99\n1.0\n1.05\n1.1\n"), 0o644))
	sum, out := watchOnce(t, "3/1s fixed, 3/1s", sendlog.Options{}, false, edge)
	assert.Equal(t, []int64{0, 3}, sum.Violations)
	assert.Contains(t, out, "  3/1s fixed   0 violations, at most 3 sends in a window\n")
	for _, at := range []string{"0.4", "0.5"} {
		b := filepath.Join(dir, "b"+at+".txt")
		require.NoError(t, os.WriteFile(b, []byte("0.0\n0.0\n0.0\n0.0\n"+at+"\n"), 0o644))
		sum, out := watchOnce(t, "2/1s burst 4", sendlog.Options{}, false, b)
		want := map[string]int64{"0.4": 1, "0.5": 0}[at]
		assert.Equal(t, []int64{want}, sum.Violations, "fifth send at %s", at)
		if want > 0 {
			assert.Contains(t, out, "breaks 2/1s burst 4: the bucket held 0.8; 5 sends since it was full, from 0.000000000 s\n")
		}
	}
	fixed := filepath.Join(dir, "fixed.txt")
	require.NoError(t, os.WriteFile(fixed, []byte("1.0\n1.2\n1.5\n"), 0o644))
	_, out = watchOnce(t, "2/1s fixed", sendlog.Options{}, true, fixed)
	assert.Contains(t, out, `"fixed_window_from_ns":1000000000,"fixed_window_to_ns":2000000000`)
}

// TestWatchCostsAgainstBruteForce: cost rules beside a call rule, per key,
// count what the definition counts (each earlier send of the key less
// than a window before, plus the send's own cost, over the limit).
func TestWatchCostsAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	dir := t.TempDir()
	type send struct {
		ms     int64
		key    string
		tokens int64
	}
	for iter := range 20 {
		var sends []send
		lines := []string{"ts_ms,key,tokens"}
		ms := int64(1767225600000)
		for range 150 {
			ms += []int64{0, 1000, rng.Int64N(300)}[rng.IntN(3)]
			s := send{ms, []string{"a", "b"}[rng.IntN(2)], []int64{0, 1, 50, 51, rng.Int64N(30)}[rng.IntN(5)]}
			sends = append(sends, s)
			lines = append(lines, fmt.Sprintf("%d,%s,%d", s.ms, s.key, s.tokens))
		}
		var want [2]int64
		for i, s := range sends {
			calls, tokens := int64(1), s.tokens
			for _, e := range sends[:i] {
				if e.key == s.key && s.ms-e.ms < 1000 {
					calls, tokens = calls+1, tokens+e.tokens
				}
			}
			if calls > 4 {
				want[0]++
			}
			if tokens > 50 {
				want[1]++
			}
		}
		path := filepath.Join(dir, "sends.csv")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		sum, _ := watchOnce(t, "4/1s, 50 tokens/1s", sendlog.Options{KeyCol: "key", Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}, false, path)
		assert.Equal(t, want[:], sum.Violations, "iter %d", iter)
	}
}

// TestWatchFirstCallOversizeOpensNoWindow: the first-call log, as
// watch follows it: the send of 10 tokens breaks the rule alone and opens
// no window, and the summary's counts agree in number.
func TestWatchFirstCallOversizeOpensNoWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fc.csv")
	require.NoError(t, os.WriteFile(path, []byte("ts_ns,tokens\n0,10\n100000000,1\n200000000,1\n"), 0o644))
	read := sendlog.Options{Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}}
	sum, out := watchOnce(t, "9 tokens/1500ms first-call", read, false, path)
	assert.Equal(t, []int64{1}, sum.Violations)
	assert.Contains(t, out, "fc.csv:2: 0.000000000 s breaks 9 tokens/1.5s first-call: its 10 tokens alone exceed the limit, with no window open: it opened none\n")
	assert.Contains(t, out, "watched 1 file: 4 lines, 3 sends\n  9 tokens/1.5s first-call 1 violation, at most 10 tokens in a window\n")
}

// TestInstantIsExact: times below the epoch floor are printed from
// integer nanoseconds; float64 seconds lost the last digits past 2^53 ns
// (104 days from the log's start).
func TestInstantIsExact(t *testing.T) {
	assert.Equal(t, "0.000000000 s", instant(0))
	assert.Equal(t, "9007199.254740993 s", instant(1<<53+1))
	assert.Equal(t, "946684799.999999999 s", instant(epochFloor-1))
	assert.Equal(t, "-1.500000000 s", instant(-1_500_000_000))
}

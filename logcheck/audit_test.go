package logcheck

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

var testRules = []rule.Rule{{Limit: 10, Window: time.Second}, {Limit: 500, Window: time.Minute}, {Limit: 2000, Window: 10 * time.Minute}}

// sends makes n sorted epoch-ns times with exponential gaps of the given
// mean, on a millisecond grid so that equal times and exact-window gaps
// occur.
func sends(rng *rand.Rand, n int, mean time.Duration) []int64 {
	ts := make([]int64, n)
	t := int64(1767225600) * 1e9
	for i := range ts {
		t += int64(rng.ExpFloat64()*float64(mean)) / 1e6 * 1e6
		ts[i] = t
	}
	return ts
}

func csvOf(ts []int64, keys []string) string {
	var b strings.Builder
	b.WriteString("ts_ns,key\n")
	for i, t := range ts {
		k := "k"
		if keys != nil {
			k = keys[i]
		}
		fmt.Fprintf(&b, "%d,%s\n", t, k)
	}
	return b.String()
}

func gz(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func violations(res *report.Result) []int64 {
	var v []int64
	for _, tot := range res.Totals {
		v = append(v, tot.Violations)
	}
	return v
}

// TestMergeEqualsSortedConcatenation: 8 gzip files checked as one fleet give
// the counts of their concatenation, sorted. RLCHECK_FULL=1 runs the full
// 8 × 1,000,000 lines; the default is 8 × 50,000.
func TestMergeEqualsSortedConcatenation(t *testing.T) {
	per := 50_000
	if testrun.Full() {
		per = 1_000_000
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var inputs []Input
	var all []int64
	for f := range 8 {
		ts := sends(rng, per, 1200*time.Millisecond) // the fleet sends ~6.7/s
		all = append(all, ts...)
		inputs = append(inputs, Input{Name: fmt.Sprintf("host%d.csv.gz", f), R: bytes.NewReader(gz(t, csvOf(ts, nil)))})
	}
	res, err := Run(inputs, Config{Rules: testRules, MaxDisorder: 5 * time.Second})
	require.NoError(t, err)
	slices.Sort(all)
	want, err := checker.Check(all, checker.Config{Rules: testRules})
	require.NoError(t, err)
	require.Equal(t, int64(len(all)), res.Sends, "merged sends")
	got := violations(res)
	for i := range testRules {
		assert.Equal(t, want.Rules[i].Violations, got[i], "%v: violations, sorted concatenation against merged", testRules[i])
		assert.Equal(t, want.Rules[i].MaxInWindow, res.Groups[0].Report.Rules[i].MaxInWindow, "%v: max in window", testRules[i])
	}
	assert.NotZero(t, got[0], "the generated fleet should break 10/1s somewhere; the test proves nothing")
	if assert.Len(t, res.Files, 8) {
		assert.Equal(t, int64(per), res.Files[3].Sends)
		assert.Equal(t, "csv", res.Files[3].Format)
	}
}

// TestShuffledWithinHorizon: a log shuffled within 2 s gives the counts of
// the sorted log, and the report says how much was out of order.
func TestShuffledWithinHorizon(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ts := sends(rng, 40_000, 150*time.Millisecond)
	shuffled := slices.Clone(ts)
	// Delay each line's position by up to 2 s of its time: sort by a
	// jittered key, so no send moves more than 2 s from its place.
	jit := make([]int64, len(ts))
	for i := range jit {
		jit[i] = ts[i] + rng.Int64N(int64(2*time.Second))
	}
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(jit[a] - jit[b]) })
	for i, j := range idx {
		shuffled[i] = ts[j]
	}
	res, err := Run([]Input{{Name: "s.csv", R: strings.NewReader(csvOf(shuffled, nil))}}, Config{Rules: testRules, MaxDisorder: 5 * time.Second})
	require.NoError(t, err)
	want, _ := checker.Check(ts, checker.Config{Rules: testRules})
	for i := range testRules {
		assert.Equal(t, want.Rules[i].Violations, res.Totals[i].Violations, "%v: shuffled against sorted", testRules[i])
	}
	assert.NotZero(t, res.Disorder.Lines)
	assert.LessOrEqual(t, res.Disorder.Max, 2*time.Second)
	assert.GreaterOrEqual(t, res.Disorder.Max, time.Second)
	// The same log with a 1 s horizon is refused, naming a line.
	_, err = Run([]Input{{Name: "s.csv", R: strings.NewReader(csvOf(shuffled, nil))}}, Config{Rules: testRules, MaxDisorder: time.Second})
	assert.ErrorContains(t, err, "s.csv:")
	assert.ErrorContains(t, err, "beyond the reorder horizon")
	// logcheck.Config.Sort takes any order.
	res, err = Run([]Input{{Name: "s.csv", R: strings.NewReader(csvOf(shuffled, nil))}}, Config{Rules: testRules, Sort: true})
	require.NoError(t, err)
	assert.Equal(t, want.Rules[0].Violations, res.Totals[0].Violations, "sorted")
}

// TestPerKeyAgainstBruteForce compares per-key counts with the O(n²)
// definition applied to each key's sends, from one file and from three
// merged.
func TestPerKeyAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rules := []rule.Rule{{Limit: 3, Window: time.Second}, {Limit: 8, Window: 5 * time.Second}}
	for iter := range 20 {
		n := 800
		ts := sends(rng, n, 60*time.Millisecond)
		keys := make([]string, n)
		nk := 1 + rng.IntN(30)
		for i := range keys {
			keys[i] = "tenant-" + strconv.Itoa(rng.IntN(nk))
		}
		inputs := []Input{{Name: "k.csv", R: strings.NewReader(csvOf(ts, keys))}}
		if iter%2 == 1 {
			// Dealt round robin into three files, merged back.
			var parts [3][]int64
			var partKeys [3][]string
			for i := range ts {
				parts[i%3], partKeys[i%3] = append(parts[i%3], ts[i]), append(partKeys[i%3], keys[i])
			}
			inputs = nil
			for f := range parts {
				inputs = append(inputs, Input{Name: "k" + strconv.Itoa(f) + ".csv", R: strings.NewReader(csvOf(parts[f], partKeys[f]))})
			}
		}
		res, err := Run(inputs, Config{
			Rules: rules, Read: sendlog.Options{KeyCol: "key"}, MaxDisorder: time.Second,
		})
		require.NoError(t, err)
		byKey := map[string][]int64{}
		for i, k := range keys {
			byKey[k] = append(byKey[k], ts[i])
		}
		require.Len(t, res.Groups, len(byKey))
		var prev int64 = 1 << 62
		for _, g := range res.Groups {
			for r, rl := range rules {
				require.Equal(t, bruteViolations(byKey[g.Key], rl), g.Report.Rules[r].Violations, "iter %d key %s %v against brute force", iter, g.Key, rl)
			}
			v := g.Violations()
			require.LessOrEqual(t, v, prev, "groups not worst first")
			prev = v
		}
	}
}

func bruteViolations(ts []int64, r rule.Rule) int64 {
	var n int64
	for i := range ts {
		earlier := 0
		for j := range i {
			if ts[i]-ts[j] < int64(r.Window) {
				earlier++
			}
		}
		if earlier >= r.Limit {
			n++
		}
	}
	return n
}

// TestInFlightAgainstSweep compares the in-flight check with a brute-force
// count of overlapping intervals, including calls that end exactly when
// another starts.
func TestInFlightAgainstSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for iter := range 200 {
		n := 1 + rng.IntN(200)
		starts := make([]int64, n)
		ends := make([]int64, n)
		var t0 int64
		for i := range starts {
			t0 += int64(rng.IntN(4)) * 10
			starts[i] = t0
			ends[i] = t0 + int64(rng.IntN(8))*10 // on the same grid: many exact touches
		}
		capN := 1 + rng.IntN(5)
		var b strings.Builder
		b.WriteString("ts,end\n")
		for i := range starts {
			fmt.Fprintf(&b, "%d,%d\n", starts[i], ends[i])
		}
		res, err := Run([]Input{{Name: "f.csv", R: strings.NewReader(b.String())}}, Config{
			Rules: []rule.Rule{{Limit: 1 << 20, Window: time.Second}}, MaxInFlight: capN,
			Read: sendlog.Options{EndCol: "end", Unit: sendlog.UnitNanos},
		})
		require.NoError(t, err)
		var wantViol, wantPeak int64
		for i := range starts {
			inFlight := int64(0) // calls before i (in start order) still running at starts[i]
			for j := range i {
				if starts[j] <= starts[i] && ends[j] > starts[i] {
					inFlight++
				}
			}
			if inFlight >= int64(capN) {
				wantViol++
			}
			if ends[i] > starts[i] {
				inFlight++
			}
			wantPeak = max(wantPeak, inFlight)
		}
		f := res.InFlight
		require.Equal(t, wantViol, f.Violations, "iter %d cap %d: violations against the sweep", iter, capN)
		require.Equal(t, wantPeak, f.Peak, "iter %d cap %d: peak against the sweep", iter, capN)
	}
}

// TestIdleKeysReleaseMemory: keys that send a burst and go quiet give
// their window memory back, so memory follows the active keys.
func TestIdleKeysReleaseMemory(t *testing.T) {
	rules := []rule.Rule{{Limit: 2, Window: time.Second}}
	res := report.Result{PerKey: true, Rules: rules}
	tab := &groupTable{cfg: Config{Rules: rules, Read: sendlog.Options{KeyCol: "key"}}, ids: map[string]int32{}, res: &res}
	const keys = 20_000
	for k := range keys {
		id := tab.lookup([]byte("k" + strconv.Itoa(k)))
		var run held
		for j := range 3 {
			run.appendItem(item{at: int64(k)*int64(2*time.Second) + int64(j), key: id}, false, true)
		}
		tab.observeRun(run)
	}
	idle := 0
	for _, g := range tab.groups {
		if g.idle {
			idle++
		}
	}
	// The sweep visits one key per send, amortized: most quiet keys are
	// released by the end, and none that is still inside its window.
	assert.GreaterOrEqual(t, idle, keys/2, "quiet keys released")
	assert.False(t, tab.groups[keys-1].idle, "the key that just sent was released")
	tab.finish()
	res = *tab.res
	assert.Equal(t, int64(keys), res.Totals[0].Violations, "releasing memory lost counts")
	assert.Equal(t, keys, res.Totals[0].Groups, "releasing memory lost counts")
}

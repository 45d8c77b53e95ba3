package logcheck

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/checker"
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
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

func violations(res *Result) []int64 {
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
	if os.Getenv("RLCHECK_FULL") == "1" {
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
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	want, err := checker.Check(all, checker.Config{Rules: testRules})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sends != int64(len(all)) {
		t.Fatalf("merged %d sends, want %d", res.Sends, len(all))
	}
	got := violations(res)
	for i := range testRules {
		if got[i] != want.Rules[i].Violations || res.Groups[0].Report.Rules[i].MaxInWindow != want.Rules[i].MaxInWindow {
			t.Errorf("%v: merged %d violations (max %d), sorted concatenation %d (max %d)", testRules[i], got[i],
				res.Groups[0].Report.Rules[i].MaxInWindow, want.Rules[i].Violations, want.Rules[i].MaxInWindow)
		}
	}
	if got[0] == 0 {
		t.Error("the generated fleet should break 10/1s somewhere; the test proves nothing")
	}
	if len(res.Files) != 8 || res.Files[3].Sends != int64(per) || res.Files[3].Format != "csv" {
		t.Errorf("files = %+v", res.Files[3])
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
	if err != nil {
		t.Fatal(err)
	}
	want, _ := checker.Check(ts, checker.Config{Rules: testRules})
	for i := range testRules {
		if got := res.Totals[i].Violations; got != want.Rules[i].Violations {
			t.Errorf("%v: shuffled %d, sorted %d", testRules[i], got, want.Rules[i].Violations)
		}
	}
	if res.Disorder.Lines == 0 || res.Disorder.Max > 2*time.Second || res.Disorder.Max < time.Second {
		t.Errorf("disorder = %+v", res.Disorder)
	}
	// The same log with a 1 s horizon is refused, naming a line.
	_, err = Run([]Input{{Name: "s.csv", R: strings.NewReader(csvOf(shuffled, nil))}}, Config{Rules: testRules, MaxDisorder: time.Second})
	if err == nil || !strings.Contains(err.Error(), "s.csv:") || !strings.Contains(err.Error(), "beyond the reorder horizon") {
		t.Errorf("1 s horizon: %v", err)
	}
	// --sort takes any order.
	res, err = Run([]Input{{Name: "s.csv", R: strings.NewReader(csvOf(shuffled, nil))}}, Config{Rules: testRules, Sort: true})
	if err != nil || res.Totals[0].Violations != want.Rules[0].Violations {
		t.Errorf("sorted: %v, %v", err, res)
	}
}

// TestPerKeyAgainstBruteForce compares per-key counts with the O(n²)
// definition applied to each key's sends.
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
		res, err := Run([]Input{{Name: "k.csv", R: strings.NewReader(csvOf(ts, keys))}}, Config{
			Rules: rules, Read: sendlog.Options{KeyCol: "key"}, MaxDisorder: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string][]int64{}
		for i, k := range keys {
			byKey[k] = append(byKey[k], ts[i])
		}
		if len(res.Groups) != len(byKey) {
			t.Fatalf("%d groups, %d keys", len(res.Groups), len(byKey))
		}
		var prev int64 = 1 << 62
		for _, g := range res.Groups {
			for r, rl := range rules {
				if want := bruteViolations(byKey[g.Key], rl); g.Report.Rules[r].Violations != want {
					t.Fatalf("iter %d key %s %v: %d violations, brute force %d", iter, g.Key, rl, g.Report.Rules[r].Violations, want)
				}
			}
			if v := g.Violations(); v > prev {
				t.Fatalf("groups not worst first: %d after %d", v, prev)
			} else {
				prev = v
			}
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
		if err != nil {
			t.Fatal(err)
		}
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
		if f.Violations != wantViol || f.Peak != wantPeak {
			t.Fatalf("iter %d cap %d: violations %d peak %d; sweep says %d and %d", iter, capN, f.Violations, f.Peak, wantViol, wantPeak)
		}
	}
}

// TestIdleKeysReleaseMemory: keys that send a burst and go quiet give
// their window memory back, so memory follows the active keys.
func TestIdleKeysReleaseMemory(t *testing.T) {
	var res Result
	tab := &groupTable{cfg: Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, Read: sendlog.Options{KeyCol: "key"}}, ids: map[string]int32{}, res: &res}
	const keys = 20_000
	for k := range keys {
		id := tab.lookup([]byte("k" + strconv.Itoa(k)))
		for j := range 3 {
			tab.observe(item{at: int64(k)*int64(2*time.Second) + int64(j), key: id})
		}
	}
	idle := 0
	for _, g := range tab.groups {
		if g.idle {
			idle++
		}
	}
	// The sweep visits one key per send, amortized: most quiet keys are
	// released by the end, and none that is still inside its window.
	if idle < keys/2 {
		t.Errorf("%d of %d quiet keys released", idle, keys)
	}
	if last := tab.groups[keys-1]; last.idle {
		t.Error("the key that just sent was released")
	}
	tab.finish()
	if res.Totals[0].Violations != keys || res.Totals[0].Groups != keys {
		t.Errorf("totals %+v: releasing memory lost counts", res.Totals[0])
	}
}

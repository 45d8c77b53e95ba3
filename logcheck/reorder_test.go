package logcheck

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// raceEnabled is set under the race detector, which slows the long tests
// tenfold; they shorten themselves then.
var raceEnabled bool

// reorderOut runs sends through a reorder buffer, pushed in batches of
// random sizes with a release after each, as Run does, and returns what
// came out.
func reorderOut(t *testing.T, rng *rand.Rand, in []item, horizon int64, withEnd, withKey bool) ([]item, *budget) {
	bud := &budget{max: math.MaxInt}
	ro := reorder{name: "p", file: 1, horizon: horizon, budget: bud}
	var out []item
	drain := func(flush bool) {
		for {
			run := ro.release(flush)
			if run.len() == 0 {
				return
			}
			for i := range run.len() {
				out = append(out, run.item(i))
			}
		}
	}
	for len(in) > 0 {
		n := min(len(in), 1+rng.IntN(300))
		var b sendlog.Batch
		var keys []int32 // the batch has no key column here
		if withKey {
			keys = []int32{}
		}
		for _, it := range in[:n] {
			b.At = append(b.At, it.at)
			b.Line = append(b.Line, it.ref.Line())
			if withEnd {
				b.End = append(b.End, it.end)
			}
			if withKey {
				keys = append(keys, it.key)
			}
		}
		require.NoError(t, ro.push(&b, keys))
		in = in[n:]
		drain(false)
	}
	drain(true)
	assert.Zero(t, ro.entries(), "entries left after the flush")
	return out, bud
}

// TestReorderAgainstStableSort: whatever the disorder within the horizon,
// the buffer releases the sends of a stable sort by time, ties in input
// order, with equal instants (which fold into runs) on purpose.
func TestReorderAgainstStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	iters := 400
	if raceEnabled {
		iters = 40
	}
	for iter := range iters {
		n := 1 + rng.IntN(3000)
		horizon := []int64{0, 1, 5, 50, 1000}[rng.IntN(5)]
		withEnd, withKey := rng.IntN(3) == 0, rng.IntN(3) == 0
		// Times on a coarse grid so that ties are common, each line late by
		// at most the horizon: at least the newest time so far minus it.
		in := make([]item, n)
		var newest int64
		line := int64(0)
		for i := range in {
			at := newest + int64(rng.IntN(3))*int64(rng.IntN(2))
			if rng.IntN(4) == 0 && horizon > 0 {
				at = max(0, newest-rng.Int64N(horizon+1))
			}
			newest = max(newest, at)
			line += 1 + int64(rng.IntN(2)) // gaps: blank lines between sends
			in[i] = item{at: at, ref: report.MakeRef(1, line)}
			if withEnd {
				in[i].end = at + int64(rng.IntN(2))
			}
			if withKey {
				in[i].key = int32(rng.IntN(2))
			}
		}
		if rng.IntN(5) == 0 { // long runs of one instant, stepping evenly
			for i := range in {
				in[i].at, in[i].end, in[i].key = in[0].at, in[0].end, in[0].key
			}
		}
		want := slices.Clone(in)
		sort.SliceStable(want, func(i, j int) bool { return want[i].at < want[j].at })
		got, _ := reorderOut(t, rng, in, horizon, withEnd, withKey)
		require.Equal(t, want, got, "iter %d: %d sends, horizon %d", iter, n, horizon)
	}
}

// TestReorderLimits: a send later than the horizon is refused, naming it;
// equal instants are held as runs, and nothing is held with horizon 0.
func TestReorderLimits(t *testing.T) {
	line := func(ats ...int64) []item {
		var in []item
		for i, at := range ats {
			in = append(in, item{at: at, ref: report.MakeRef(1, int64(i+1))})
		}
		return in
	}
	same := make([]int64, 300_000)
	if raceEnabled {
		same = same[:100_000] // still past minCompact
	}
	const batch = 1000
	tests := []struct {
		name     string
		in       []item
		horizon  int64
		maxPeak  int // entries held at most
		disorder int64
	}{
		{"in order, horizon 0", line(1, 2, 2, 3), 0, 4, 0},
		// Compaction folds the tail once it passes minCompact entries.
		{"one instant", line(same...), 5, minCompact + batch, 0},
		{"one instant, horizon 0", line(same...), 0, batch, 0},
		// Late sends at one instant extend one run per batch.
		{"late run at one instant", line(append([]int64{9}, same...)...), 9, 1 + len(same)/batch + 1, int64(len(same))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bud := &budget{max: math.MaxInt}
			ro := reorder{name: "p", file: 1, horizon: tt.horizon, budget: bud}
			n := 0
			for in := tt.in; len(in) > 0; {
				b := sendlog.Batch{}
				for _, it := range in[:min(batch, len(in))] {
					b.At, b.Line = append(b.At, it.at), append(b.Line, it.ref.Line())
				}
				in = in[len(b.At):]
				require.NoError(t, ro.push(&b, nil))
				for run := ro.release(len(in) == 0); run.len() > 0; run = ro.release(len(in) == 0) {
					n += run.len()
				}
			}
			assert.Equal(t, len(tt.in), n)
			assert.LessOrEqual(t, bud.peak, tt.maxPeak, "entries held")
			assert.Equal(t, tt.disorder, ro.disorder.Lines)
		})
	}
	t.Run("beyond the horizon", func(t *testing.T) {
		ro := reorder{name: "p.txt", file: 0, horizon: 5, budget: &budget{max: 10}}
		b := sendlog.Batch{At: []int64{10, 20, 14}, Line: []int64{1, 3, 4}}
		err := ro.push(&b, nil)
		var ie *sendlog.InputError
		require.ErrorAs(t, err, &ie)
		assert.EqualError(t, err, "p.txt:4: 6ns earlier than line 3, beyond the reorder horizon logcheck.Config.MaxDisorder 5ns (raise it, or logcheck.Config.Sort the whole input)")
	})
}

// lines streams n copies of a line, as a generator rather than a file.
type lines struct {
	line string
	n    int
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	if len(l.buf) == 0 {
		if l.n == 0 {
			return 0, io.EOF
		}
		k := min(l.n, 4096)
		l.buf = []byte(strings.Repeat(l.line, k))
		l.n -= k
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// TestEqualInstantsHeldAsRuns: 2 million sends at one instant (a gzip bomb
// of one repeated line, scaled down) are checked exactly while the reorder
// buffer holds a bounded number of entries, with the default horizon, with
// none, with logcheck.Config.Sort and with a key column; before, it held every send.
func TestEqualInstantsHeldAsRuns(t *testing.T) {
	n := int64(2_000_000)
	if testing.Short() || raceEnabled {
		n = 300_000 // still past the bound
	}
	// One batch is at most a chunk of two-byte lines; compaction starts at
	// minCompact entries.
	bound := minCompact + 256<<10/2 + 4096/2
	rules := []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 100, Window: time.Minute}}
	tests := []struct {
		name, file, head, line string
		cfg                    Config
		sends                  int64
		want                   []int64
	}{
		{"default horizon", "b.txt", "", "1\n", Config{MaxDisorder: 5 * time.Second}, n, []int64{n - 5, n - 100}},
		{"horizon 0", "b.txt", "", "1\n", Config{}, n, []int64{n - 5, n - 100}},
		{"sort", "b.txt", "", "1\n", Config{Sort: true}, n, []int64{n - 5, n - 100}},
		{"a key and an end", "b.csv", "ts,k,end\n", "1,a,2\n", Config{MaxDisorder: 5 * time.Second, Read: sendlog.Options{KeyCol: "k", EndCol: "end"}, MaxInFlight: 1 << 30}, n, []int64{n - 5, n - 100}},
		// The first send, 2 s later, goes last: alone in its second.
		{"late behind one send", "b.txt", "3\n", "1\n", Config{MaxDisorder: 5 * time.Second}, n + 1, []int64{n - 5, n + 1 - 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Rules = rules
			cfg.MaxBuffered = bound
			r := io.MultiReader(strings.NewReader(tt.head), &lines{line: tt.line, n: int(n)})
			res, err := Run([]Input{{Name: tt.file, R: r}}, cfg)
			require.NoError(t, err)
			require.Equal(t, tt.sends, res.Sends)
			assert.Equal(t, tt.want, violations(res))
			assert.LessOrEqual(t, res.PeakBuffered, bound, "entries held at once")
		})
	}
}

// TestMaxBuffered: sends that must all be held (distinct times within the
// horizon, or with logcheck.Config.Sort the whole input) stop at the bound with an error
// naming it, rather than growing without end.
func TestMaxBuffered(t *testing.T) {
	n := 300_000
	if raceEnabled {
		n = 30_000
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d\n", 1_700_000_000_000_000_000+int64(i)*1000) // 1 µs apart
	}
	log := b.String()
	third := n / 3
	tests := []struct {
		name string
		cfg  Config
		want string // "" for a verdict
	}{
		{"within the bound", Config{MaxDisorder: time.Second, MaxBuffered: n + third}, ""},
		{"horizon", Config{MaxDisorder: time.Second, MaxBuffered: third}, fmt.Sprintf("more than %d sends lie within logcheck.Config.MaxDisorder 1s of the newest, and each must be held until no later line can precede it (logcheck.Config.MaxBuffered %[1]d): raise logcheck.Config.MaxBuffered, or lower logcheck.Config.MaxDisorder", third)},
		{"a short horizon holds less", Config{MaxDisorder: time.Millisecond, MaxBuffered: third}, ""},
		{"sort", Config{Sort: true, MaxBuffered: third}, fmt.Sprintf("logcheck.Config.Sort holds the whole input, and it has more than %d sends to hold (logcheck.Config.MaxBuffered %[1]d): raise logcheck.Config.MaxBuffered, or drop logcheck.Config.Sort and set logcheck.Config.MaxDisorder", third)},
		{"sort within the bound", Config{Sort: true, MaxBuffered: n}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Rules = []rule.Rule{{Limit: 1000, Window: time.Millisecond}}
			res, err := Run([]Input{{Name: "m.txt", R: strings.NewReader(log)}}, cfg)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, int64(n), res.Sends)
				// The bound is checked before reading on: the peak may pass it
				// by one batch of 20-byte lines.
				assert.LessOrEqual(t, res.PeakBuffered, cfg.MaxBuffered+(256<<10+4096)/20)
				return
			}
			var ie *sendlog.InputError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, "m.txt", ie.File)
			assert.Positive(t, ie.Line)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("over every input", func(t *testing.T) {
		_, err := Run([]Input{{Name: "a.txt", R: strings.NewReader(log)}, {Name: "b.txt", R: strings.NewReader(log)}},
			Config{Rules: []rule.Rule{{Limit: 1, Window: time.Second}}, Sort: true, MaxBuffered: n + third})
		assert.ErrorContains(t, err, fmt.Sprintf("logcheck.Config.MaxBuffered %d", n+third))
	})
	t.Run("negative", func(t *testing.T) {
		_, err := Run([]Input{{Name: "a.txt", R: strings.NewReader(log)}}, Config{MaxBuffered: -1})
		assert.EqualError(t, err, "logcheck.Config.MaxBuffered -1: want 1 or more")
	})
}

// reversed returns n epoch-ns times 10 µs apart, newest first.
func reversed(n int) []int64 {
	ts := make([]int64, n)
	for i := range ts {
		ts[i] = 1_767_225_600_000_000_000 + int64(n-1-i)*10_000
	}
	return ts
}

// TestReversedWithinHorizon: 200,000 lines in reverse order, all within
// the horizon, are each put in place (a heap, O(log n) a line; inserting
// into a sorted slice took 30 s) and give the counts of the sorted log.
func TestReversedWithinHorizon(t *testing.T) {
	n := 200_000
	if raceEnabled {
		n = 20_000
	}
	ts := reversed(n)
	res, err := Run([]Input{{Name: "r.csv", R: strings.NewReader(csvOf(ts, nil))}}, Config{Rules: testRules, MaxDisorder: 5 * time.Second})
	require.NoError(t, err)
	sorted := slices.Clone(ts)
	slices.Sort(sorted)
	want, _ := checker.Check(sorted, checker.Config{Rules: testRules})
	for i := range testRules {
		assert.Equal(t, want.Rules[i].Violations, res.Totals[i].Violations, "%v", testRules[i])
	}
	assert.Equal(t, int64(len(ts)-1), res.Disorder.Lines)
	// The first violation is the sorted log's: sorted index i is line
	// n-i+1 of the reversed file, after its header.
	first, got := want.Rules[0].First, res.Groups[0].Report.Rules[0].First
	require.NotNil(t, first)
	require.NotNil(t, got)
	assert.Equal(t, int64(len(ts))-first.Send.Ref+1, report.Ref(got.Send.Ref).Line())
}

// BenchmarkReversed times lines in reverse order within the horizon; the
// figures are in docs/benchmarks.md.
func BenchmarkReversed(b *testing.B) {
	for _, n := range []int{50_000, 200_000} {
		log := csvOf(reversed(n), nil)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				_, err := Run([]Input{{Name: "r.csv", R: strings.NewReader(log)}}, Config{Rules: testRules, MaxDisorder: 5 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEqualInstants times a log of one repeated line, streamed.
func BenchmarkEqualInstants(b *testing.B) {
	const n = 5_000_000
	for b.Loop() {
		res, err := Run([]Input{{Name: "b.txt", R: &lines{line: "1\n", n: n}}}, Config{Rules: testRules, MaxDisorder: 5 * time.Second})
		if err != nil || res.Sends != n {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlines/s")
}

// TestSortMergesInputs: logcheck.Config.Sort over several shuffled inputs gives the
// verdict of their concatenation sorted stably by time, ties in the order
// the files were named, first violation included.
func TestSortMergesInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	rules := []rule.Rule{{Limit: 3, Window: 10 * time.Millisecond}, {Limit: 20, Window: 100 * time.Millisecond}}
	for iter := range 20 {
		type send struct {
			at   int64
			file int
			line int64
		}
		var all []send
		var inputs []Input
		for f := range 3 {
			n := 1 + rng.IntN(400)
			ts := make([]int64, n)
			for i := range ts {
				ts[i] = 1_767_225_600_000_000_000 + int64(rng.IntN(300))*int64(time.Millisecond)
				all = append(all, send{ts[i], f, int64(i + 2)})
			}
			inputs = append(inputs, Input{Name: fmt.Sprintf("h%d.csv", f), R: strings.NewReader(csvOf(ts, nil))})
		}
		res, err := Run(inputs, Config{Rules: rules, Sort: true})
		require.NoError(t, err)
		sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
		ts := make([]int64, len(all))
		for i, s := range all {
			ts[i] = s.at
		}
		want, err := checker.Check(ts, checker.Config{Rules: rules})
		require.NoError(t, err)
		for r := range rules {
			got := res.Groups[0].Report.Rules[r]
			require.Equal(t, want.Rules[r].Violations, got.Violations, "iter %d %v", iter, rules[r])
			if w := want.Rules[r].First; w != nil {
				s := all[w.Send.Ref]
				require.NotNil(t, got.First)
				assert.Equal(t, report.MakeRef(s.file, s.line), report.Ref(got.First.Send.Ref), "iter %d %v: first violation", iter, rules[r])
			}
		}
	}
}

package infer_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

// The ground truth's scale: groundBudget requests per seed pin every
// rule serveprobe.Contract draws (N up to 100 calls, windows up to a
// minute), and groundDelay is the client→serve delay's spread.
const (
	groundBudget = 2000
	groundDelay  = 5 * time.Millisecond
)

// groundSeeds is how many seeds each case draws: the first 12 every day,
// 100 with RLCHECK_FULL=1, over which the shares are asserted.
var groundSeeds = infertest.Seeds(12, 100)

// The shares of seeds the ground truth asks for: from serve's log, the
// contract recovered on servedRecovery and its ranges narrow on
// servedNarrow; from the client's log, sentRecovery and sentNarrow.
const (
	servedRecovery, servedNarrow = 0.98, 0.90
	sentRecovery, sentNarrow     = 0.95, 0.85
)

// The four measures of a row, in the order of groundRow.short.
const (
	mServedRecovered = iota
	mServedNarrow
	mSentRecovered
	mSentNarrow
	numMeasures
)

var (
	measureNames      = [numMeasures]string{"recovered from serve's log", "narrow from serve's log", "recovered from the client's log", "narrow from the client's log"}
	measureThresholds = [numMeasures]float64{servedRecovery, servedNarrow, sentRecovery, sentNarrow}
)

// knownShortMargin is how far below the share measured a known-short
// measure may fall before the row fails: a regression net under the
// threshold, which stays asserted as soon as the row reaches it.
const knownShortMargin = 0.05

// groundRow is one case of the ground truth: whether it runs only in
// full, and the measures known to fall short of their threshold, each
// with the share measured (0 where the threshold is met).
type groundRow struct {
	c     serveprobe.Case
	full  bool // run with RLCHECK_FULL=1 only
	short [numMeasures]float64
}

// groundScore is how one fit compares with the hidden contract, in the
// two measures of the ground truth. Recovered: every hidden rule the log
// can show is among the rules reported, each by a rule of its own, with
// its kind, unit and window (a bucket: its rate as units a day and its
// burst) inside the reported ranges, and every rule reported is a hidden
// one. Narrow: recovered, and every reported range at most 10% wide and
// bounded. Why says what failed.
type groundScore struct {
	recovered, narrow bool
	why               string
}

// score scores the fit f against the hidden contract, whose rules
// showable are those the log can show.
func score(hidden, showable []rule.Rule, f infer.Fit) groundScore {
	switch {
	case !f.Fits:
		return groundScore{why: "does not fit"}
	case !matched(showable, f.Rules, make([]bool, len(f.Rules))):
		return groundScore{why: fmt.Sprintf("the rules the log shows, %v, are not each found", showable)}
	}
	for _, r := range f.Rules {
		if !slices.ContainsFunc(hidden, func(h rule.Rule) bool { return holds(h, r) }) {
			return groundScore{why: fmt.Sprintf("%s %s is no hidden rule", infer.RulesText([]infer.Rule{r}), rangeText(r))}
		}
	}
	for _, r := range f.Rules {
		if len(wideBounds(r)) > 0 {
			return groundScore{recovered: true, why: fmt.Sprintf("%s %s is more than 10%% wide", infer.RulesText([]infer.Rule{r}), rangeText(r))}
		}
	}
	return groundScore{recovered: true, narrow: true}
}

// matched reports whether each rule of want holds in a reported rule of
// its own among got, those marked used taken.
func matched(want []rule.Rule, got []infer.Rule, used []bool) bool {
	if len(want) == 0 {
		return true
	}
	for i, r := range got {
		if !used[i] && holds(want[0], r) {
			used[i] = true
			if matched(want[1:], got, used) {
				return true
			}
			used[i] = false
		}
	}
	return false
}

// holds reports whether the reported rule r is the hidden rule h: the
// same kind and unit, the same window, N inside the range (a bucket: its
// rate as units a day, so that 10/1s is 20/2s, and its burst inside
// theirs). A range with no upper bound holds every value from its least.
func holds(h rule.Rule, r infer.Rule) bool {
	if r.Kind != h.Kind || r.Unit != h.Unit {
		return false
	}
	if h.Kind == rule.Bucket {
		perDay := int64(h.Limit) * int64(24*time.Hour/h.Window)
		return r.RateMin <= perDay && (perDay <= r.RateMax || r.RateOpen) && r.Min <= h.Burst && (h.Burst <= r.Max || r.Max == 0)
	}
	return r.Window == h.Window && r.Min <= h.Limit && (h.Limit <= r.Max || r.Max == 0)
}

// wideBounds lists r's ranges that are more than 10% wide or open, each
// with the words the advice must carry for it: what would bound it.
func wideBounds(r infer.Rule) []string {
	isWide := func(lo, hi int64) bool { return 10*(hi-lo) > hi }
	var out []string
	if r.Kind != rule.Bucket {
		switch {
		case r.Max == 0:
			out = append(out, "no refusal bounds N")
		case isWide(int64(r.Min), int64(r.Max)):
			out = append(out, "pins N")
		}
		return out
	}
	switch {
	case r.RateOpen:
		out = append(out, "the rate has no upper bound")
	case isWide(r.RateMin, r.RateMax):
		out = append(out, "pins the rate")
	}
	if r.Max == 0 || isWide(int64(r.Min), int64(r.Max)) {
		out = append(out, "pins the burst")
	}
	return out
}

// showable replays serve's log through infertest's provider, written
// apart from serve and from infer, under serve's reading (refused calls
// count), and requires each status to be serve's: the hidden rules the
// log can show are those that refused some call no other one refused.
func showable(t *testing.T, seed uint64, hidden []rule.Rule, log []infer.Send) []rule.Rule {
	p := infertest.NewProvider(hidden, true)
	for _, s := range log {
		cost := int64(1)
		if len(s.Cost) > 0 {
			cost = s.Cost[0]
		}
		require.Equal(t, s.Refused, p.CallCost(s.At, cost), "seed %d, %v: serve's log line %d: serve and the provider disagree", seed, hidden, s.Line)
	}
	var out []rule.Rule
	for k, h := range hidden {
		if p.Alone[k] > 0 {
			out = append(out, h)
		}
	}
	return out
}

// recovered reports whether f is the whole hidden contract, every rule
// narrow.
func recovered(hidden []rule.Rule, f infer.Fit) bool {
	return score(hidden, hidden, f).narrow
}

// TestGroundTruthFromServe runs hidden contracts of 1 to 3 rules through
// a real serve (serveprobe), groundSeeds seeds per case, and infers them
// back under serve's reading (refused calls count): from the server's
// own log, and from the client's, whose send instants are up to
// groundDelay before the arrivals serve judged. Each seed is scored as
// score says; in full, the shares are asserted at the thresholds above,
// and a row known short of one logs it and skips when the rest hold.
func TestGroundTruthFromServe(t *testing.T) {
	rows := []groundRow{
		{c: serveprobe.Case{Kind: rule.Sliding}},
		{c: serveprobe.Case{Kind: rule.Fixed}},
		// Buckets run with RLCHECK_FULL=1 only (about 40 s of CPU).
		{c: serveprobe.Case{Kind: rule.Bucket}, full: true},
		{c: serveprobe.Case{Kind: rule.Sliding, Cost: true}},
		{c: serveprobe.Case{Kind: rule.Fixed, Cost: true}},
		{c: serveprobe.Case{Kind: rule.Bucket, Cost: true}, full: true},
	}
	for _, row := range rows {
		t.Run(row.c.String(), func(t *testing.T) {
			if row.full && !infertest.Full() {
				t.Skip("buckets: about 40 s of CPU; RLCHECK_FULL=1 runs them")
			}
			t.Parallel()
			// Buckets come back on a share of seeds only: their per-seed
			// checks of the tolerance would fail on the others.
			counts := groundTruth(t, row.c, row.c.Kind != rule.Bucket)
			t.Logf("%s over %d seeds: recovered from serve's log on %d, narrow on %d; from the client's recovered on %d, narrow on %d",
				row.c, groundSeeds, counts[mServedRecovered], counts[mServedNarrow], counts[mSentRecovered], counts[mSentNarrow])
			if infertest.Full() {
				assertShares(t, row, counts)
			}
		})
	}
}

// assertShares asserts each measure's share at its threshold; one the row
// knows short is asserted at its measured share less knownShortMargin,
// and the row then skips, naming the shares it falls short with.
func assertShares(t *testing.T, row groundRow, counts [numMeasures]int) {
	var short []string
	for m := range numMeasures {
		got := float64(counts[m]) / float64(groundSeeds)
		switch {
		case got >= measureThresholds[m]:
			if row.short[m] > 0 {
				t.Logf("%s: %.0f%% reaches %.0f%%: the row is no longer short there", measureNames[m], 100*got, 100*measureThresholds[m])
			}
		case row.short[m] == 0:
			assert.GreaterOrEqual(t, got, measureThresholds[m], measureNames[m])
		default:
			assert.GreaterOrEqual(t, got, row.short[m]-knownShortMargin, "%s: below the share known (%.2f)", measureNames[m], row.short[m])
			short = append(short, fmt.Sprintf("%s on %.0f%% of seeds, short of %.0f%%", measureNames[m], 100*got, 100*measureThresholds[m]))
		}
	}
	if len(short) > 0 {
		t.Skipf("known short: %s", strings.Join(short, "; "))
	}
}

// groundTruth probes groundSeeds hidden contracts of case c and counts
// the seeds of each measure. The server's log always fits exactly; the
// client's, told groundDelay (Options.Delay), fits within it, which is
// then reported; where tolerated is false (buckets), neither is
// asserted. On every recovered seed, each range more than 10% wide or
// open carries advice saying what would bound it.
func groundTruth(t *testing.T, c serveprobe.Case, tolerated bool) (counts [numMeasures]int) {
	spreads := map[time.Duration]int{} // the tolerance each client's log needed
	defer func() { t.Logf("%s: spreads the client's logs needed: %v (0: none)", c, spreads) }()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for seed := range uint64(groundSeeds) {
		hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), c)
		run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
		require.NoError(t, err)
		log, err := run.ServedLog()
		require.NoError(t, err)
		shows := showable(t, seed, hidden, log)
		wg.Add(1)
		go func() {
			defer wg.Done()
			opt := infer.Options{Units: run.Units()}
			exact := infer.Infer(log, opt)
			a := exact.Fits[infer.RefusedCount]
			// A user who logged on the client knows it, and the delay's bound.
			res := infer.Infer(run.ClientLog(), infer.Options{Units: run.Units(), Delay: groundDelay})
			b := res.Fits[infer.RefusedCount]
			var spread time.Duration
			if tol := res.Tolerance; tol != nil {
				spread = tol.Spread
				b = tol.ByReading[infer.RefusedCount].Fit
				assert.True(t, !tolerated || tol.Fits, "seed %d: the hidden contract fits within the delay", seed)
				assert.True(t, !tolerated || tol.Spread <= groundDelay, "seed %d: spread %v", seed, tol.Spread)
			}
			mu.Lock()
			defer mu.Unlock()
			if tolerated {
				assert.Nil(t, exact.Tolerance, "seed %d: the server's log needs no tolerance", seed)
			}
			spreads[spread]++
			for i, f := range []infer.Fit{a, b} {
				s := score(hidden, shows, f)
				counts[2*i] += map[bool]int{true: 1}[s.recovered]
				counts[2*i+1] += map[bool]int{true: 1}[s.narrow]
				if s.recovered {
					assertAdvice(t, seed, f)
				}
				if !s.narrow {
					t.Logf("seed %d, %s: hidden %v (showable %v), found %s %v: %s", seed, []string{"serve's log", fmt.Sprintf("client's log (spread %v)", spread)}[i], hidden, shows, infer.RulesText(f.Rules), ranges(f), s.why)
				}
			}
		}()
	}
	wg.Wait()
	return counts
}

// assertAdvice asserts that each of f's ranges more than 10% wide or open
// comes with advice naming it.
func assertAdvice(t *testing.T, seed uint64, f infer.Fit) {
	for _, r := range f.Rules {
		for _, words := range wideBounds(r) {
			assert.Contains(t, r.Advice(), words, "seed %d: %s %s", seed, infer.RulesText([]infer.Rule{r}), rangeText(r))
		}
	}
}

// rangeText is r's ranges: N, or a bucket's rate a day and burst.
func rangeText(r infer.Rule) string {
	if r.Kind == rule.Bucket {
		return fmt.Sprintf("rate [%d,%d]/day open=%v burst [%d,%d]", r.RateMin, r.RateMax, r.RateOpen, r.Min, r.Max)
	}
	return fmt.Sprintf("[%d,%d]", r.Min, r.Max)
}

func ranges(f infer.Fit) []string {
	var out []string
	for _, r := range f.Rules {
		out = append(out, rangeText(r))
	}
	return out
}

// TestSimplerWithinTolerance: a client's log of one bucket (17/1s burst
// 32, calls reaching serve 0 to 5 ms late) that the exact search explains
// with a bucket of its own for the refusals the delay made comes with
// the hidden bucket alone within a tolerance, which the summary counts
// against the log (exit status 1).
func TestSimplerWithinTolerance(t *testing.T) {
	const seed = 16
	c := serveprobe.Case{Kind: rule.Bucket}
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), c)
	require.Equal(t, "17/1s burst 32", rule.Rule.String(hidden[0]))
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: 600, MaxDelay: groundDelay})
	require.NoError(t, err)
	log := run.ClientLog()
	res := infer.Infer(log, infer.Options{})
	exact := res.Fits[res.Best]
	require.True(t, exact.Fits)
	assert.Len(t, exact.Rules, 2, "the exact fit needs a second bucket")
	tol := res.Tolerance
	require.NotNil(t, tol)
	assert.True(t, tol.Simpler)
	assert.LessOrEqual(t, tol.Spread, groundDelay)
	assert.True(t, recovered(hidden, tol.Used().Fit), "found %s", infer.RulesText(tol.Used().Rules))
	sum, err := infer.Stream(io.Discard, "text", "client.csv", &infer.Log{Keys: []string{""}, Sends: map[string][]infer.Send{"": log}}, infer.Options{}, false)
	require.NoError(t, err)
	assert.True(t, sum.Contradicted, "an exact fit that hides a simpler contract is not exit 0")
}

// TestGroundScore: the ground truth's scoring on fits built by hand. A
// hidden rule the log cannot show may be missing or reported; a rule of
// another window or unit may not; a hidden rule matches one reported rule
// of its own; a range more than 10% wide or open is recovered but not
// narrow, and a bucket compares its rate as units a day.
func TestGroundScore(t *testing.T) {
	a := rule.Rule{Limit: 10, Window: time.Second}
	b := rule.Rule{Limit: 40, Window: 10 * time.Second}
	bk := rule.Rule{Limit: 5, Window: time.Second, Kind: rule.Bucket, Burst: 9}
	ra := infer.Rule{Window: time.Second, Min: 10, Max: 10}
	rb := infer.Rule{Window: 10 * time.Second, Min: 38, Max: 41}
	rk := infer.Rule{Window: 2 * time.Second, Kind: rule.Bucket, RateMin: 432000, RateMax: 432000, Min: 9, Max: 9}
	fit := func(rs ...infer.Rule) infer.Fit { return infer.Fit{Fits: true, Rules: rs} }
	for _, c := range []struct {
		name              string
		hidden, shows     []rule.Rule
		f                 infer.Fit
		recovered, narrow bool
	}{
		{"both found", []rule.Rule{a, b}, []rule.Rule{a, b}, fit(ra, rb), true, true},
		{"an unshown rule missing", []rule.Rule{a, b}, []rule.Rule{a}, fit(ra), true, true},
		{"an unshown rule reported", []rule.Rule{a, b}, []rule.Rule{a}, fit(ra, rb), true, true},
		{"a shown rule missing", []rule.Rule{a, b}, []rule.Rule{a, b}, fit(ra), false, false},
		{"another window", []rule.Rule{a}, []rule.Rule{a}, fit(ra, infer.Rule{Window: 2 * time.Second, Min: 15, Max: 15}), false, false},
		{"another unit", []rule.Rule{a}, []rule.Rule{a}, fit(infer.Rule{Window: time.Second, Unit: "tokens", Min: 10, Max: 10}), false, false},
		{"N outside", []rule.Rule{a}, []rule.Rule{a}, fit(infer.Rule{Window: time.Second, Min: 11, Max: 12}), false, false},
		{"wide", []rule.Rule{a}, []rule.Rule{a}, fit(infer.Rule{Window: time.Second, Min: 8, Max: 10}), true, false},
		{"open", []rule.Rule{a}, []rule.Rule{a}, fit(infer.Rule{Window: time.Second, Min: 8}), true, false},
		{"one rule for two", []rule.Rule{a, a}, []rule.Rule{a, a}, fit(ra), false, false},
		{"a bucket by its rate a day", []rule.Rule{bk}, []rule.Rule{bk}, fit(rk), true, true},
		{"a bucket's rate open", []rule.Rule{bk}, []rule.Rule{bk}, fit(infer.Rule{Kind: rule.Bucket, RateMin: 400000, RateMax: 420000, RateOpen: true, Min: 9, Max: 9}), true, false},
		{"a bucket's burst outside", []rule.Rule{bk}, []rule.Rule{bk}, fit(infer.Rule{Kind: rule.Bucket, RateMin: 432000, RateMax: 432000, Min: 10, Max: 11}), false, false},
		{"no fit", []rule.Rule{a}, nil, infer.Fit{}, false, false},
	} {
		s := score(c.hidden, c.shows, c.f)
		assert.Equal(t, c.recovered, s.recovered, "%s: %s", c.name, s.why)
		assert.Equal(t, c.narrow, s.narrow, "%s: %s", c.name, s.why)
	}
}

// TestOneTokenBucketFromServe: serve's log of one token bucket (200
// tokens/2s burst 259), whose region is a sliver: burst 258 fits at no
// rate, and the rate below which it has no room for a refusal lies within
// a part in 128 of the least rate it keeps the accepted calls at. The
// walk to the least burst goes past it, and the exact region gives the
// hidden bucket under both readings.
func TestOneTokenBucketFromServe(t *testing.T) {
	const seed = 25
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), serveprobe.Case{Kind: rule.Bucket, Cost: true})
	require.Equal(t, "200 tokens/2s burst 259", rule.Rule.String(hidden[0]))
	require.Len(t, hidden, 1)
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
	require.NoError(t, err)
	log, err := run.ServedLog()
	require.NoError(t, err)
	res := infer.Infer(log, infer.Options{Units: run.Units()})
	for _, rd := range []infer.Reading{infer.RefusedCount, infer.RefusedFree} {
		f := res.Fits[rd]
		s := score(hidden, hidden, f)
		assert.True(t, s.narrow, "%v: found %s %v: %s", rd, infer.RulesText(f.Rules), ranges(f), s.why)
	}
}

// TestTwoTokenBucketsFromServe: serve's log of two token buckets (50
// tokens/2s burst 84 and 163 tokens/10s burst 325), where the sampled
// search finds a bucket near the first and none beside it: the exact
// region of what that bucket leaves gives the second, and the cover both.
func TestTwoTokenBucketsFromServe(t *testing.T) {
	s, found := servedFit(t, 51, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "50 tokens/2s burst 84,163 tokens/10s burst 325")
	assert.True(t, s.recovered, "%s: %s", found, s.why)
}

// TestSecondBucketInASliver: serve's log of two token buckets (90
// tokens/10s burst 136 and 184 tokens/30s burst 291), where beside the
// first the second fits only in a sliver (529920 to 529921 tokens a day
// at burst 291) whose outer bound's corners do not fit: climbing each
// burst from the least rate finds it, and both are recovered.
func TestSecondBucketInASliver(t *testing.T) {
	s, found := servedFit(t, 1, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "90 tokens/10s burst 136,184 tokens/30s burst 291")
	assert.True(t, s.recovered, "%s: %s", found, s.why)
}

// TestThirdBucketBesideAPair: serve's log of three buckets (2/1s burst
// 4, 7/5s burst 7 and 52/1m burst 100), where the third refuses few
// calls of its own and the sampled search never samples near it: beside
// the two buckets it picks, the exact region of the refusals both leave
// holds the third, and all three are recovered.
func TestThirdBucketBesideAPair(t *testing.T) {
	s, found := servedFit(t, 64, serveprobe.Case{Kind: rule.Bucket}, "2/1s burst 4,7/5s burst 7,52/1m burst 100")
	assert.True(t, s.recovered, "%s: %s", found, s.why)
}

// TestThirdBucketBesideANearPair: serve's log of three token buckets (90
// tokens/2s burst 139, 310 tokens/15s burst 526 and 772 tokens/1m burst
// 1078), where the second bucket picked is off the hidden one and no
// third fits beside the two as picked: taking what each explains at
// rates just above its own as explained, the third is found, the second
// sought again beside it and the first, and all three are recovered
// within 10%.
func TestThirdBucketBesideANearPair(t *testing.T) {
	s, found := servedFit(t, 52, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "90 tokens/2s burst 139,310 tokens/15s burst 526,772 tokens/1m burst 1078")
	assert.True(t, s.narrow, "%s: %s", found, s.why)
}

// TestSecondBucketSoughtFromBothEnds: serve's logs of two token buckets
// where, beside the first, the second fits only in a sliver of an extent
// bounded from outside, which a climb over its bursts does not reach
// within its budget (100 tokens/10s burst 111 and 406 tokens/1m burst
// 615: the second fits at burst 615 alone, in bursts 292 to 1105; 70
// tokens/5s burst 91 and 140 tokens/15s burst 186): the extent's boxes,
// clipped and halved best first from its least burst and from its most,
// find it, and both are recovered.
func TestSecondBucketSoughtFromBothEnds(t *testing.T) {
	servedTokenBucketsRecovered(t, []seedWant{
		{40, "100 tokens/10s burst 111,406 tokens/1m burst 615"},
		{17, "70 tokens/5s burst 91,140 tokens/15s burst 186"},
	})
}

// TestSecondBucketBesideANearFirst: serve's log of two token buckets (20
// tokens/5s burst 30 and 62 tokens/30s burst 87) where the first bucket
// picked (345568 tokens a day, burst 30) is a little off the hidden one
// (345600): under "refused calls count" it leaves a refusal the hidden one
// explains, and no second bucket fits beside it. Taking what it explains
// at rates up to 0.1% above its own as explained, the second is found,
// the first sought again beside it, and both are recovered.
func TestSecondBucketBesideANearFirst(t *testing.T) {
	s, found := servedFit(t, 81, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "20 tokens/5s burst 30,62 tokens/30s burst 87")
	assert.True(t, s.recovered, "%s: %s", found, s.why)
}

// TestBucketPickedUnderTheOtherReading: serve's log of two token buckets
// (40 tokens/10s burst 67 and 123 tokens/1m burst 149) where the sampled
// search picks a bucket near the first under "refused calls do not
// count" only: its point, tried under "refused calls count" too, leads
// to both, recovered within 10%.
func TestBucketPickedUnderTheOtherReading(t *testing.T) {
	s, found := servedFit(t, 39, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "40 tokens/10s burst 67,123 tokens/1m burst 149")
	assert.True(t, s.narrow, "%s: %s", found, s.why)
}

// TestSecondBucketBesideTheFirstAsReported: serve's log of two token
// buckets (110 tokens/1s burst 200 and 367 tokens/1m burst 529), where
// the sampled search's candidate for the second has more burst than the
// log allows beside the first, and explains fewer refusals: the first
// bucket's region, taken beside that candidate, is empty. Taken beside
// the second as reported (its exact region), it holds the hidden first,
// and both are recovered within 10%.
func TestSecondBucketBesideTheFirstAsReported(t *testing.T) {
	s, found := servedFit(t, 8, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "110 tokens/1s burst 200,367 tokens/1m burst 529")
	assert.True(t, s.narrow, "%s: %s", found, s.why)
}

// TestTwoBucketsListedBesideWindow: serve's log of two buckets (18/5s
// burst 22 and 36/15s burst 69), where a window beside the first bucket
// fits with as few rules as two buckets do. The window is reported (a
// cover with fewer buckets is kept), and a bucket is listed among what it
// could also be, its confidence below 1.
func TestTwoBucketsListedBesideWindow(t *testing.T) {
	_, log, units := servedContract(t, 31, serveprobe.Case{Kind: rule.Bucket}, "18/5s burst 22,36/15s burst 69")
	f := infer.Infer(log, infer.Options{Units: units}).Fits[infer.RefusedCount]
	require.Len(t, f.Rules, 2, "found %s", infer.RulesText(f.Rules))
	i := slices.IndexFunc(f.Rules, func(r infer.Rule) bool { return r.Kind != rule.Bucket })
	require.GreaterOrEqual(t, i, 0, "found %s", infer.RulesText(f.Rules))
	w := f.Rules[i]
	assert.True(t, slices.ContainsFunc(w.AlsoFits, func(r rule.Rule) bool { return r.Kind == rule.Bucket }), "%s could also be %v", infer.RulesText([]infer.Rule{w}), w.AlsoFits)
	assert.Less(t, w.Confidence, 1.0)
}

// TestBothReadingsSearched: serve's log of two token buckets (40
// tokens/1s burst 49 and 411 tokens/30s burst 614) that a window beside
// a bucket explains under "refused calls do not count", and only two
// buckets under "refused calls count": both readings are searched alike,
// both fit with two rules, and the report says the log cannot tell them
// apart.
func TestBothReadingsSearched(t *testing.T) {
	_, log, units := servedContract(t, 80, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "40 tokens/1s burst 49,411 tokens/30s burst 614")
	res := infer.Infer(log, infer.Options{Units: units})
	for _, rd := range []infer.Reading{infer.RefusedCount, infer.RefusedFree} {
		f := res.Fits[rd]
		assert.True(t, f.Fits, "%v", rd)
		assert.Len(t, f.Rules, 2, "%v: found %s", rd, infer.RulesText(f.Rules))
	}
	assert.True(t, res.BothFit)
}

// seedWant is a ground-truth seed and the contract it draws.
type seedWant struct {
	seed uint64
	want string
}

// servedTokenBucketsRecovered asserts, for each seed of the token
// buckets' case, that serve's log of its contract (want) is recovered.
func servedTokenBucketsRecovered(t *testing.T, cases []seedWant) {
	for _, c := range cases {
		s, found := servedFit(t, c.seed, serveprobe.Case{Kind: rule.Bucket, Cost: true}, c.want)
		assert.True(t, s.recovered, "%s: %s", found, s.why)
	}
}

// servedFit infers serve's log of case c's contract for seed (which must
// be want) under "refused calls count", and scores it: the score, and
// what was found for a failure's message.
func servedFit(t *testing.T, seed uint64, c serveprobe.Case, want string) (groundScore, string) {
	hidden, log, units := servedContract(t, seed, c, want)
	f := infer.Infer(log, infer.Options{Units: units}).Fits[infer.RefusedCount]
	return score(hidden, hidden, f), fmt.Sprintf("seed %d: found %s %v", seed, infer.RulesText(f.Rules), ranges(f))
}

// servedContract draws case c's hidden contract for seed, requires it to
// be want, and probes it through serve: serve's log and its units.
func servedContract(t *testing.T, seed uint64, c serveprobe.Case, want string) ([]rule.Rule, []infer.Send, []string) {
	hidden, run := probed(t, seed, c, want)
	log, err := run.ServedLog()
	require.NoError(t, err)
	return hidden, log, run.Units()
}

// probed draws case c's hidden contract for seed, requires it to be
// want, and probes it through serve as the ground truth does.
func probed(t *testing.T, seed uint64, c serveprobe.Case, want string) ([]rule.Rule, *serveprobe.Run) {
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), c)
	rules, err := rule.ParseList(want)
	require.NoError(t, err)
	require.Equal(t, rules, hidden)
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
	require.NoError(t, err)
	return hidden, run
}

// TestBucketRangesHoldTheDelay: a client's log of one bucket (6/1s burst
// 9, calls reaching serve 0 to 5 ms late) fits within a spread of less
// than the delay, where the bucket's region is a sliver beside the
// hidden one: the ranges reported are those within 5 ms, which hold it.
func TestBucketRangesHoldTheDelay(t *testing.T) {
	const seed = 4
	c := serveprobe.Case{Kind: rule.Bucket}
	hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), c)
	require.Equal(t, "6/1s burst 9", rule.Rule.String(hidden[0]))
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
	require.NoError(t, err)
	res := infer.Infer(run.ClientLog(), infer.Options{})
	tol := res.Tolerance
	require.NotNil(t, tol)
	f := tol.ByReading[infer.RefusedCount]
	assert.Less(t, f.Spread, groundDelay)
	s := score(hidden, hidden, f.Fit)
	assert.True(t, s.narrow, "found %s %v: %s", infer.RulesText(f.Rules), ranges(f.Fit), s.why)
	var out strings.Builder
	_, err = infer.Stream(&out, "text", "client.csv", &infer.Log{Keys: []string{""}, Sends: map[string][]infer.Send{"": run.ClientLog()}}, infer.Options{}, false)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "The buckets' ranges are those within 5ms")
	out.Reset()
	_, err = infer.Stream(&out, "json", "client.csv", &infer.Log{Keys: []string{""}, Sends: map[string][]infer.Send{"": run.ClientLog()}}, infer.Options{}, false)
	require.NoError(t, err)
	assert.Contains(t, out.String(), `"bucket_ranges_spread_ns": 5000000`)
}

// TestSecondBucketInTheUnitOfTheFirst: serve's logs of two token buckets
// (180 tokens/5s burst 226 and 371 tokens/15s burst 705; 40 tokens/1s
// burst 49 and 411 tokens/30s burst 614), where beside the first a
// bucket on calls explains what it leaves as well as one on tokens does:
// the cover in fewer units is reported, and both hidden buckets are
// recovered.
func TestSecondBucketInTheUnitOfTheFirst(t *testing.T) {
	servedTokenBucketsRecovered(t, []seedWant{
		{31, "180 tokens/5s burst 226,371 tokens/15s burst 705"},
		{80, "40 tokens/1s burst 49,411 tokens/30s burst 614"},
	})
}

// TestSecondBucketFarDownItsExtent: serve's log of two token buckets (60
// tokens/1s burst 88 and 310 tokens/10s burst 578), where beside the
// first the second's extent spans bursts 88 to 831 and the bucket fits
// only in a sliver near burst 575: the bursts climbed spread over the
// extent reach it within the budget that a walk down from 831 spends
// before, and both are recovered.
func TestSecondBucketFarDownItsExtent(t *testing.T) {
	s, found := servedFit(t, 82, serveprobe.Case{Kind: rule.Bucket, Cost: true}, "60 tokens/1s burst 88,310 tokens/10s burst 578")
	assert.True(t, s.recovered, "%s: %s", found, s.why)
}

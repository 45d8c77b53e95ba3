package infer

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// windowNsWithin is the oracle of a window rule within a delay: the Ns of
// window w of kind k that some arrivals a_i in [t_i+o, t_i+o+sp], on a
// grid of step (ties in log order), make judge every call as the log
// says under reading rd, as [lo, hi] per arrivals, united; each is
// replayed call by call, independently of the spread passes.
func windowNsWithin(s []Send, w time.Duration, k rule.Kind, rd Reading, o, sp, step int64) map[int]bool {
	r := rule.Rule{Window: w, Kind: k}
	fit := map[int]bool{}
	arrive := make([]int64, len(s))
	var try func(i int)
	try = func(i int) {
		if i < len(s) {
			for a := s[i].At + o; a <= s[i].At+o+sp; a += step {
				arrive[i] = a
				try(i + 1)
			}
			return
		}
		order := make([]int, len(s))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(x, y int) int { return int(arrive[x] - arrive[y]) })
		lo, hi := 1, 1<<30
		for n, i := range order {
			before := 0
			for _, j := range order[:n] {
				if (rd == RefusedCount || !s[j].Refused) && inWindow(r, arrive[j], arrive[i]) {
					before++
				}
			}
			if s[i].Refused {
				hi = min(hi, before)
			} else {
				lo = max(lo, before+1)
			}
		}
		for n := lo; n <= min(hi, 64); n++ {
			fit[n] = true
		}
	}
	try(0)
	return fit
}

// TestDelayRangesHoldEveryFit: with a delay D given, each rule of the
// contract reported within D holds in its ranges every N (a window's) or
// rate and burst (a bucket's) that fits the log alone within D: a brute
// force over a grid of arrivals within [t+o, t+o+D] (the offset reported
// for a fixed window, whose ranges are those at it), logs that fit
// exactly among them.
func TestDelayRangesHoldEveryFit(t *testing.T) {
	const ms = int64(time.Millisecond)
	const delay = 2 * ms
	rng := rand.New(rand.NewPCG(41, 43))
	windows := []time.Duration{3 * time.Millisecond, 5 * time.Millisecond}
	var checked, exact, buckets int
	for range 300 {
		s, _ := smallSpreadLog(rng)
		res := Infer(s, Options{Windows: windows, Delay: time.Duration(delay)})
		tol := res.Tolerance
		if res.Refused == 0 {
			continue
		}
		require.NotNil(t, tol, "log %v: a delay given, the tolerance is the answer", s)
		assert.Equal(t, time.Duration(delay), tol.Delay)
		if !tol.WithinDelay() {
			continue
		}
		if res.Fits[res.Best].Fits {
			exact++
		}
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			f := tol.ByReading[rd]
			if !f.Fits || len(f.Rules) != 1 {
				continue
			}
			r := f.Rules[0]
			if r.Kind == rule.Bucket {
				buckets++
				checkDelayBucket(t, s, r, delay)
				continue
			}
			checked++
			for n := range windowNsWithin(s, r.Window, r.Kind, rd, int64(f.Offset), delay, ms) {
				assert.True(t, r.Min <= n && (r.Max == 0 || n <= r.Max),
					"log %v, %s: %v %v N=%d fits within %v, reported [%d,%d]", s, rd, r.Window, r.Kind, n, time.Duration(delay), r.Min, r.Max)
			}
		}
	}
	t.Logf("%d window fits, %d bucket fits checked; %d logs fit exactly", checked, buckets, exact)
	assert.Greater(t, checked, 50, "few window fits checked")
	assert.Greater(t, exact, 20, "few logs that fit exactly")
	assert.Greater(t, buckets, 5, "few bucket fits checked")
}

// checkDelayBucket asserts that every bucket on a grid of rates and
// bursts that fits the log alone within delay lies in r's ranges.
func checkDelayBucket(t *testing.T, s []Send, r Rule, delay int64) {
	t.Helper()
	at, refused := make([]int64, len(s)), make([]bool, len(s))
	for i, c := range s {
		at[i], refused[i] = c.At, c.Refused
	}
	_, step, rates := smallSpread()
	for _, q := range rates {
		for b := int64(1); b <= 4; b++ {
			if !fitsSomehow(at, refused, delay, step, q, b) {
				continue
			}
			assert.True(t, r.RateMin <= q && (r.RateOpen || q <= r.RateMax) && int64(r.Min) <= b && (r.Max == 0 || b <= int64(r.Max)),
				"log %v: bucket %d/day burst %d fits within %v, reported rate [%d,%d] open=%v burst [%d,%d]",
				s, q, b, time.Duration(delay), r.RateMin, r.RateMax, r.RateOpen, r.Min, r.Max)
		}
	}
}

// TestDelayKeepsEveryExactFit: a contract that fits a log exactly fits
// within every delay (each call arriving at its logged instant), so with
// a delay given, every reading an exact contract fits also fits within
// it, with no more rules: over small logs of two hidden buckets (on calls
// or tokens), where the sampled search within the delay alone can miss
// the pair.
func TestDelayKeepsEveryExactFit(t *testing.T) {
	var exact int
	for seed := range uint64(infertest.Seeds(40, 400)) {
		rng := rand.New(rand.NewPCG(seed, 59))
		s := twoBucketLog(rng, seed%2 == 1)
		units := []string(nil)
		if seed%2 == 1 {
			units = []string{infertest.Tokens}
		}
		res := Infer(s, Options{Units: units, Delay: 5 * time.Millisecond})
		if res.Refused == 0 {
			continue
		}
		require.NotNil(t, res.Tolerance, "seed %d", seed)
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			f := res.Fits[rd]
			if !f.Fits || slices.ContainsFunc(f.Rules, func(r Rule) bool { return r.Outer }) {
				continue // a region bounded from outside names no bucket that fits
			}
			exact++
			within := res.Tolerance.ByReading[rd]
			if assert.True(t, within.Fits, "seed %d, %v: fits exactly with %s, not within the delay", seed, rd, RulesText(f.Rules)) {
				assert.LessOrEqual(t, within.Spread, 5*time.Millisecond, "seed %d, %v", seed, rd)
				assert.LessOrEqual(t, len(within.Rules), len(f.Rules), "seed %d, %v: %s within the delay, %s exactly", seed, rd, RulesText(within.Rules), RulesText(f.Rules))
			}
		}
	}
	t.Logf("%d exact fits kept within the delay", exact)
	assert.Greater(t, exact, 20, "few logs fit exactly")
}

package infer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// TestCountMatchesBruteForce: each pass's counts, under both readings,
// equal a direct count of the earlier calls in each call's window.
func TestCountMatchesBruteForce(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var s []Send
		at := int64(-3 * time.Second) // negative times too: floor, not truncation
		for i := range 300 {
			at += rng.Int64N(5) * int64(100*time.Millisecond) // on a grid: calls exactly W apart
			s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1)})
		}
		d := newSends(s)
		for _, w := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second} {
			for _, k := range windowKinds {
				p := d.count(int64(w), k)
				want := bruteLower(s, rule.Rule{Window: w, Kind: k})
				for _, rd := range []Reading{RefusedCount, RefusedFree} {
					r := 0
					lower := 1
					for i, c := range s {
						n := bruteBefore(s, i, rule.Rule{Window: w, Kind: k}, rd)
						if c.Refused {
							require.EqualValues(t, n, p.before[rd][r], "seed %d %v %v %v: refusal on line %d", seed, w, k, rd, c.Line)
							r++
						} else {
							lower = max(lower, n+1)
						}
					}
					assert.Equal(t, lower, p.lower[rd], "seed %d %v %v %v", seed, w, k, rd)
					assert.Equal(t, want[rd], p.lower[rd])
				}
				assert.LessOrEqual(t, p.steps, int64(2*len(s)), "at most two pointer moves a call")
			}
		}
	}
}

func bruteBefore(s []Send, i int, r rule.Rule, rd Reading) int {
	n := 0
	for j := range i {
		if (rd == RefusedCount || !s[j].Refused) && inWindow(r, s[j].At, s[i].At) {
			n++
		}
	}
	return n
}

func bruteLower(s []Send, r rule.Rule) [2]int {
	out := [2]int{1, 1}
	for i, c := range s {
		if c.Refused {
			continue
		}
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			out[rd] = max(out[rd], bruteBefore(s, i, r, rd)+1)
		}
	}
	return out
}

// TestRecoversHiddenContract replays hidden contracts of one to three
// sliding or fixed rules, under both readings, over random probing
// traffic, and infers them back. Always: the true reading fits, no lower
// bound exceeds a true limit, and the contract found is no larger than
// the rules that refused calls; when the rules found are the hidden ones
// that refused calls alone, every true N lies in its range. The share of
// seeds where that happens is the recovery rate.
func TestRecoversHiddenContract(t *testing.T) {
	t.Parallel()
	seeds := infertest.Seeds(60, 200)
	recovered, trials, readingTold, readingWrong := 0, 0, 0, 0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 7))
		hidden := infertest.Contract(rng)
		refusedCount := seed%2 == 0
		p := infertest.NewProvider(hidden, refusedCount)
		log := replay(p, infertest.Traffic(rng, hidden[0], 3000))
		res := Infer(log, Options{})
		rd := RefusedFree
		if refusedCount {
			rd = RefusedCount
		}
		f := res.Fits[rd]
		name := fmt.Sprintf("seed %d: %v, %v", seed, hidden, rd)
		require.True(t, f.Fits, "%s: the true reading must fit; unexplained %v", name, f.Unexplained)
		switch {
		case res.BothFit:
		case res.Best == rd:
			readingTold++
		default:
			readingWrong++
		}
		for _, c := range res.Candidates {
			for _, h := range hidden {
				if c.Reading == rd && c.Window == h.Window && c.Kind == h.Kind {
					assert.LessOrEqual(t, c.AtLeast, h.Limit, "%s: the lower bound exceeds the true limit", name)
				}
			}
		}
		var exercised []rule.Rule
		refusing := 0
		for k, h := range hidden {
			if p.Alone[k] > 0 {
				exercised = append(exercised, h)
			}
			if p.Any[k] > 0 {
				refusing++
			}
		}
		if f.Smallest {
			assert.LessOrEqual(t, len(f.Rules), refusing, "%s: a smaller contract than the truth's exists", name)
		}
		for _, r := range f.Rules {
			assert.True(t, r.Max == 0 || r.Min <= r.Max, "%s: empty range %+v", name, r)
		}
		if len(exercised) == 0 {
			continue
		}
		if slices.ContainsFunc(f.Rules, func(r Rule) bool { return r.Kind == rule.Bucket }) {
			assert.Less(t, len(f.Rules), len(exercised), "%s: a bucket only where no windows explain as much with as few rules: %v", name, rulesOf(f.Rules))
		}
		trials++
		if sameWindows(f.Rules, exercised) {
			recovered++
			for _, h := range exercised {
				r := ruleFor(f.Rules, h)
				assert.GreaterOrEqual(t, h.Limit, r.Min, "%s: %v", name, r)
				assert.LessOrEqual(t, h.Limit, r.Max, "%s: %v", name, r)
			}
		} else {
			t.Logf("%s: inferred %v", name, rulesOf(f.Rules))
		}
	}
	rate := float64(recovered) / float64(trials)
	t.Logf("recovered %d of %d hidden contracts that refused calls (%.0f%%)", recovered, trials, 100*rate)
	t.Logf("the reading: told %d times, both fit %d times, wrongly told %d times", readingTold, seeds-readingTold-readingWrong, readingWrong)
	assert.Greater(t, trials, seeds/2, "most contracts refuse calls")
	if infertest.Full() {
		assert.GreaterOrEqual(t, rate, 0.8, "recovery rate")
		assert.LessOrEqual(t, readingWrong, seeds/20, "the wrong reading rarely fits with fewer rules")
	}
}

// exercisedRules are the hidden rules that refused some call no other
// rule refused: the ones a log can show.
func exercisedRules(p *infertest.Provider, hidden []rule.Rule) []rule.Rule {
	var out []rule.Rule
	for k, h := range hidden {
		if p.Alone[k] > 0 {
			out = append(out, h)
		}
	}
	return out
}

func sameWindows(got []Rule, want []rule.Rule) bool {
	if len(got) != len(want) {
		return false
	}
	for _, h := range want {
		if ruleFor(got, h).Window == 0 {
			return false
		}
	}
	return true
}

func ruleFor(rs []Rule, h rule.Rule) Rule {
	for _, r := range rs {
		if r.Window == h.Window && r.Kind == h.Kind {
			return r
		}
	}
	return Rule{}
}

func rulesOf(rs []Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%v [%d,%d]", r.Rule(), r.Min, r.Max))
	}
	return out
}

func inWindow(r rule.Rule, s, t int64) bool { return infertest.InWindow(r, s, t) }

func replay(p *infertest.Provider, ms []int64) []Send {
	var out []Send
	for i, c := range infertest.Replay(p, ms) {
		out = append(out, Send{At: c.At, Refused: c.Refused, Line: int64(i + 2)})
	}
	return out
}

// TestCoverSearch: the exhaustive search returns every cover of the least
// size, and the greedy one a cover with no redundant rule.
func TestCoverSearch(t *testing.T) {
	set := func(ids ...int) *Candidate {
		c := &Candidate{set: newBitset(6)}
		for _, i := range ids {
			c.set.add(i)
		}
		c.Explains = len(ids)
		return c
	}
	a, b, c, d, e := set(0, 1, 2), set(3, 4, 5), set(0, 1, 2, 3), set(4, 5), set(0, 3)
	covers := exhaustive(6, []*Candidate{a, b, c, d, e})
	assert.Equal(t, [][]*Candidate{{a, b}, {b, c}, {c, d}}, covers)
	assert.Nil(t, exhaustive(6, []*Candidate{a, d}), "no cover")
	// Greedy takes c (4), then d; e is never needed.
	assert.Equal(t, []*Candidate{c, d}, greedy(6, []*Candidate{e, c, d}))
	// A rule the later picks make redundant is dropped.
	f, g := set(0, 1, 2, 3), set(0, 1, 4, 5)
	assert.Equal(t, []*Candidate{f, g}, greedy(6, []*Candidate{f, g, set(2, 3, 4)}))
	idx := []int{0, 1}
	n := 1
	for nextCombo(idx, 5) {
		n++
	}
	assert.Equal(t, 10, n, "C(5,2) combinations")
}

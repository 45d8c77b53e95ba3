package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
)

// runCheck checks the case's CSV as `rlcheck check` does, listing every
// violation.
func runCheck(t *testing.T, c Case) map[string][]Verdict {
	t.Helper()
	res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(c.CSV())}},
		logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: c.ReadOptions()})
	require.NoError(t, err, c.String())
	require.EqualValues(t, len(c.Sends), res.Sends, c.String())
	return FromResult(res)
}

// draws yields the cases a comparison runs for family f: tiny and
// second-long windows, one key and two.
func draws(f Family, seeds int, salt uint64) []Case {
	var out []Case
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, salt+uint64(f)))
		out = append(out, Draw(rng, f, Options{Tiny: seed%2 == 0, Keys: seed%3 == 1, Sends: 40 + rng.IntN(120)}))
	}
	return out
}

// TestCheckMatchesOracle: check judges every kind, call and cost rules,
// per key, both boundaries, as the oracle does: the very sends that
// violate (by line), the fullest window and a bucket's levels.
func TestCheckMatchesOracle(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range draws(f, testrun.Seeds(12, 300), 1) {
				want := Expect(c)
				got := runCheck(t, c)
				if !assert.Equal(t, want, got, "seed %d: %s", i, c) {
					t.Log(describe(c, want, got))
					return
				}
			}
		})
	}
}

// describe prints the case's log with each send's verdicts beside it, to
// read a disagreement by.
func describe(c Case, want, got map[string][]Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", c)
	mark := func(vs map[string][]Verdict, key string, line int64) string {
		s := ""
		for r, v := range vs[key] {
			for _, l := range v.Lines {
				if l == line {
					s += fmt.Sprintf(" %d", r)
				}
			}
		}
		return s
	}
	for i, s := range c.Sends {
		line := int64(i) + 2
		fmt.Fprintf(&b, "line %d %d key=%q %v want[%s] got[%s]\n", line, s.At, s.Key, s.Costs, mark(want, s.Key, line), mark(got, s.Key, line))
	}
	return b.String()
}

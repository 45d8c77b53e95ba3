package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// bruteDeclared judges each call by direct counts (bruteBefore): the
// refused calls every rule admits, the accepted ones some rule refuses,
// and per rule the least N the accepted calls allow and the accepted
// calls it refuses.
func bruteDeclared(s []Send, rules []rule.Rule, rd Reading) (allowed, refused int, atLeast, refuses []int) {
	atLeast, refuses = make([]int, len(rules)), make([]int, len(rules))
	for i, c := range s {
		admitted := true
		for k, r := range rules {
			n := bruteBefore(s, i, r, rd)
			if n >= r.Limit {
				admitted = false
				if !c.Refused {
					refuses[k]++
				}
			}
			if !c.Refused {
				atLeast[k] = max(atLeast[k], n+1)
			}
		}
		switch {
		case c.Refused && admitted:
			allowed++
		case !c.Refused && !admitted:
			refused++
		}
	}
	for k := range atLeast {
		atLeast[k] = max(atLeast[k], 1)
	}
	return allowed, refused, atLeast, refuses
}

// TestDeclaredMatchesBruteForce: on random logs with ties and calls
// exactly a window apart, the declared contract's verdicts under both
// readings equal direct counts, sliding and fixed rules mixed.
func TestDeclaredMatchesBruteForce(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var s []Send
		at := int64(-2 * time.Second)
		for i := range 200 {
			at += rng.Int64N(4) * int64(250*time.Millisecond)
			s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1)})
		}
		var rules []rule.Rule
		for range 1 + rng.IntN(3) {
			rules = append(rules, rule.Rule{Limit: 1 + rng.IntN(8), Window: time.Duration(1+rng.IntN(4)) * time.Second, Kind: windowKinds[rng.IntN(2)]})
		}
		d := newSends(s)
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			got := declare(d, rules, false, rd)
			allowed, refused, atLeast, refuses := bruteDeclared(s, rules, rd)
			what := []any{"seed %d %v %v", seed, rules, rd}
			require.Equal(t, allowed, got.Allowed, what...)
			require.Equal(t, refused, got.Refused, what...)
			for k, r := range got.Rules {
				require.Equal(t, atLeast[k], r.AtLeast, what...)
				require.Equal(t, refuses[k], r.Refused, what...)
			}
		}
	}
}

// TestDeclaredAgainstHiddenContract: traffic replayed through 7/1s and
// 40/10s; declaring them finds the log consistent, a looser 9/1s is
// caught allowing refused calls, a stricter 5/1s refusing accepted ones
// with 2 calls a second left unused.
func TestDeclaredAgainstHiddenContract(t *testing.T) {
	hidden := []rule.Rule{{Limit: 7, Window: time.Second}, {Limit: 40, Window: 10 * time.Second}}
	rng := rand.New(rand.NewPCG(3, 4))
	log := replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, hidden[0], 3000))
	declared := func(rs string) *Declared {
		rules, err := rule.ParseList(rs)
		require.NoError(t, err)
		require.NoError(t, CheckDeclared(rules))
		return Infer(log, Options{Declared: rules}).Declared
	}
	same := declared("7/1s,40/10s")
	assert.Zero(t, same.Allowed)
	assert.Zero(t, same.Refused)
	assert.True(t, declared("9/1s,40/10s").Looser())
	strict := declared("5/1s,40/10s")
	assert.False(t, strict.Looser())
	assert.Positive(t, strict.Refused)
	assert.Equal(t, 7, strict.Rules[0].AtLeast)
	assert.Error(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Unit: "tokens"}}))
	assert.Error(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Kind: rule.Bucket, Burst: 5}}))
}

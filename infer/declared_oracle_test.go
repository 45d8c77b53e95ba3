package infer

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
)

// oracleCost is call i's cost in rule r's unit: 1 for a call rule, the
// one cost a test log carries otherwise.
func oracleCost(s []Send, i int, r rule.Rule) int64 {
	if r.Unit == "" {
		return 1
	}
	return s[i].Cost[0]
}

// oracleFloor is t/w rounded toward minus infinity.
func oracleFloor(t, w int64) int64 {
	q := t / w
	if t%w != 0 && t < 0 {
		q--
	}
	return q
}

// oracleWindowNeeds is, per call, the cost of the earlier calls in its
// window that take under rd plus its own: counted call by call.
func oracleWindowNeeds(s []Send, r rule.Rule, closed bool, rd Reading) []int64 {
	w := int64(r.Window)
	out := make([]int64, len(s))
	for i := range s {
		sum := oracleCost(s, i, r)
		for j := range i {
			in := s[i].At-s[j].At < w || closed && s[i].At-s[j].At == w
			if r.Kind == rule.Fixed {
				in = oracleFloor(s[i].At, w) == oracleFloor(s[j].At, w)
			}
			if in && (rd == RefusedCount || !s[j].Refused) {
				sum += oracleCost(s, j, r)
			}
		}
		out[i] = sum
	}
	return out
}

// oracleBucket replays bucket r with burst b in exact rationals: full at
// the first call, refilled at Limit per Window up to b; a call of cost c
// passes when c <= level; an accepted call takes c, and under
// RefusedCount so does a refused one that passes. It returns per call
// whether it passes and the least whole burst that would have passed it
// with the same level below full: ceil(b - level + c).
func oracleBucket(s []Send, r rule.Rule, rd Reading, b int64) (pass []bool, need []int64) {
	burst := new(big.Rat).SetInt64(b)
	level := new(big.Rat).Set(burst)
	for i := range s {
		if i > 0 {
			dt := new(big.Rat).SetFrac64(int64(r.Limit)*(s[i].At-s[i-1].At), int64(r.Window))
			if level.Add(level, dt); level.Cmp(burst) > 0 {
				level.Set(burst)
			}
		}
		c := new(big.Rat).SetInt64(oracleCost(s, i, r))
		n := new(big.Rat).Sub(burst, level)
		n.Add(n, c)
		ceil := new(big.Int).Quo(n.Num(), n.Denom())
		if !n.IsInt() {
			ceil.Add(ceil, big.NewInt(1))
		}
		ok := c.Cmp(level) <= 0
		pass, need = append(pass, ok), append(need, ceil.Int64())
		if !s[i].Refused || rd == RefusedCount && ok {
			level.Sub(level, c)
		}
	}
	return pass, need
}

// oracleMostAccepted is the most an accepted call needs.
func oracleMostAccepted(s []Send, need []int64) int64 {
	most := int64(1)
	for i, n := range need {
		if !s[i].Refused {
			most = max(most, n)
		}
	}
	return most
}

// oracleBurst is the least burst that admits every accepted call, found
// two ways: scanning every burst from 1 up, and raising a burst to the
// most an accepted call needs at it until they all pass (from the least
// burst under RefusedFree, where the level does not depend on the burst).
// It scans bursts up to 1000 only, and returns scan -1 past that.
func oracleBurst(s []Send, r rule.Rule, rd Reading) (scan, raised int64) {
	admitsAll := func(b int64) bool {
		pass, _ := oracleBucket(s, r, rd, b)
		for i, ok := range pass {
			if !ok && !s[i].Refused {
				return false
			}
		}
		return true
	}
	_, free := oracleBucket(s, r, RefusedFree, 1)
	raised = oracleMostAccepted(s, free)
	for rd == RefusedCount && !admitsAll(raised) {
		_, need := oracleBucket(s, r, rd, raised)
		raised = oracleMostAccepted(s, need)
	}
	if raised > 1000 {
		return -1, raised // too many to scan
	}
	for scan = 1; !admitsAll(scan); scan++ {
	}
	return scan, raised
}

type oracleVerdict struct {
	allowed, refused int
	atLeast, refuses []int
	// atMost, where set, stands for atLeast: a bucket's least burst above
	// the bursts the oracle scans, known only to be at most this.
	atMost []int
}

// checkAtLeast compares a declared rule's AtLeast with the oracle's.
func (v oracleVerdict) checkAtLeast(t *testing.T, k, got int, what ...any) {
	t.Helper()
	if v.atMost[k] > 0 {
		require.LessOrEqual(t, got, v.atMost[k], what...)
		require.Greater(t, got, 1000, what...)
		return
	}
	require.Equal(t, v.atLeast[k], got, what...)
}

// oracleDeclared judges a log by declared rules call by call.
func oracleDeclared(t *testing.T, s []Send, rules []rule.Rule, closed bool, rd Reading) oracleVerdict {
	v := oracleVerdict{atLeast: make([]int, len(rules)), refuses: make([]int, len(rules)), atMost: make([]int, len(rules))}
	admitted := make([]bool, len(s))
	for i := range admitted {
		admitted[i] = true
	}
	for k, r := range rules {
		var pass []bool
		if r.Kind == rule.Bucket {
			pass, _ = oracleBucket(s, r, rd, int64(r.Burst))
			scan, raised := oracleBurst(s, r, rd)
			if r.Unit == "" && scan >= 0 {
				require.Equal(t, scan, raised, "on calls the raised burst is the least")
			}
			require.LessOrEqual(t, scan, raised)
			v.atLeast[k] = int(scan) // the least, every burst below it tried
			if scan < 0 {
				v.atMost[k] = int(raised)
			}
		} else {
			need := oracleWindowNeeds(s, r, closed, rd)
			for _, n := range need {
				pass = append(pass, n <= int64(r.Limit))
			}
			v.atLeast[k] = int(oracleMostAccepted(s, need))
		}
		for i, ok := range pass {
			admitted[i] = admitted[i] && ok
			if !ok && !s[i].Refused {
				v.refuses[k]++
			}
		}
	}
	for i, c := range s {
		switch {
		case c.Refused && admitted[i]:
			v.allowed++
		case !c.Refused && !admitted[i]:
			v.refused++
		}
	}
	return v
}

// oracleLog is a small random log: ties, gaps of exactly a window and a
// nanosecond either side, costs of 0, at the limits and above them.
func oracleLog(rng *rand.Rand, ws []int64) []Send {
	var s []Send
	at := rng.Int64N(4*int64(time.Second)) - 2*int64(time.Second)
	for i := range 1 + rng.IntN(30) {
		w := ws[rng.IntN(len(ws))]
		switch rng.IntN(6) {
		case 0:
		case 1:
			at += w
		case 2:
			at += w - 1
		case 3:
			at += w + 1
		default:
			at += rng.Int64N(w)
		}
		s = append(s, Send{At: at, Refused: rng.IntN(3) == 0, Line: int64(i + 1), Cost: []int64{rng.Int64N(9)}})
	}
	return s
}

// oracleRule is a random rule of any kind infer compares, on calls or
// tokens; buckets at rates that divide their windows unevenly.
func oracleRule(rng *rand.Rand) rule.Rule {
	windows := []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 700 * time.Millisecond}
	r := rule.Rule{Limit: 1 + rng.IntN(7), Window: windows[rng.IntN(len(windows))], Kind: []rule.Kind{rule.Sliding, rule.Fixed, rule.Bucket}[rng.IntN(3)]}
	if rng.IntN(2) == 0 {
		r.Unit, r.Limit = "tokens", r.Limit*3
	}
	if r.Kind == rule.Bucket {
		r.Burst = 1 + rng.IntN(12)
	}
	return r
}

// TestDeclaredMatchesOracle: on random small logs, every kind of declared
// rule on calls and on tokens, under both readings and both boundaries,
// declare's verdicts equal the oracle's call-by-call replay.
func TestDeclaredMatchesOracle(t *testing.T) {
	units := []string{"tokens"}
	for seed := range uint64(testrun.Seeds(600, 4000)) {
		rng := rand.New(rand.NewPCG(seed, 9))
		var rules []rule.Rule
		var ws []int64
		for range 1 + rng.IntN(3) {
			r := oracleRule(rng)
			rules, ws = append(rules, r), append(ws, int64(r.Window))
		}
		s := oracleLog(rng, ws)
		require.NoError(t, CheckDeclared(rules, units))
		d := newSends(s)
		d.addCosts(s, units)
		closed := rng.IntN(3) == 0
		for _, rd := range []Reading{RefusedCount, RefusedFree} {
			got := declare(d, rules, closed, rd)
			want := oracleDeclared(t, s, rules, closed, rd)
			what := []any{"seed %d %v closed %v %v", seed, rules, closed, rd}
			require.Equal(t, want.allowed, got.Allowed, what...)
			require.Equal(t, want.refused, got.Refused, what...)
			for k, r := range got.Rules {
				want.checkAtLeast(t, k, r.AtLeast, what...)
				require.Equal(t, want.refuses[k], r.Refused, what...)
			}
		}
	}
}

// TestDeclaredExtremeValues: costs near int64's end, a rate of one a
// day and a window of 1 ns stay exact: the oracle's rationals agree, and
// a fixed window never needs more than the sliding one of its length.
func TestDeclaredExtremeValues(t *testing.T) {
	big := int64(1) << 61
	s := []Send{
		{At: -1, Line: 1, Cost: []int64{big}},
		{At: 0, Line: 2, Cost: []int64{big}, Refused: true},
		{At: 0, Line: 3, Cost: []int64{0}},
		{At: 1, Line: 4, Cost: []int64{big}},
		{At: int64(24 * time.Hour), Line: 5, Cost: []int64{1}},
	}
	rules := []rule.Rule{
		{Limit: 1, Window: 24 * time.Hour, Kind: rule.Bucket, Burst: 1, Unit: "tokens"},
		{Limit: 3, Window: time.Nanosecond, Kind: rule.Bucket, Burst: 2},
		{Limit: 5, Window: time.Nanosecond, Unit: "tokens"},
		{Limit: 5, Window: time.Nanosecond, Kind: rule.Fixed, Unit: "tokens"},
		{Limit: 2, Window: 24 * time.Hour, Unit: "tokens", Kind: rule.Fixed},
	}
	d := newSends(s)
	d.addCosts(s, []string{"tokens"})
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		got := declare(d, rules, false, rd)
		want := oracleDeclared(t, s, rules, false, rd)
		assert.Equal(t, want.allowed, got.Allowed, rd)
		assert.Equal(t, want.refused, got.Refused, rd)
		for k, r := range got.Rules {
			want.checkAtLeast(t, k, r.AtLeast, "%v %v", rules[k], rd)
			assert.Equal(t, want.refuses[k], r.Refused, "%v %v", rules[k], rd)
		}
		assert.LessOrEqual(t, got.Rules[3].AtLeast, got.Rules[2].AtLeast)
	}
}

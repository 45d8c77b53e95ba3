package oracle

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
)

// reserved builds a send of estimate e tokens at t, settled at u to a
// tokens; u < 0 leaves it never settled.
func reserved(t, e, u, a int64) Send {
	s := Send{T: t, Costs: map[string]int64{"tokens": e}}
	if u >= 0 {
		s.Settled, s.Actual = &u, map[string]int64{"tokens": a}
	}
	return s
}

// TestReservedSliding is docs/semantics.md's sliding example: 100
// tokens/1m; the settlement at 10 s counts for the send at 10 s (not under
// the closed reading), and an actual above the estimate fills the window
// at 61 s.
func TestReservedSliding(t *testing.T) {
	r := Rule{N: 100, W: 60 * sec, Unit: "tokens"}
	sends := []Send{
		reserved(0, 60, 10*sec, 20),
		reserved(5*sec, 50, 30*sec, 80),
		reserved(10*sec, 30, -1, 0),
		reserved(61*sec, 10, 61*sec, 0),
	}
	v := Judge(sends, r, false)
	assert.Equal(t, []int{1, 3}, v.Violations)
	assert.Equal(t, big.NewInt(120), v.Max, "80 + 30 + 10 at 61 s")
	assert.Equal(t, []int{1, 2, 3}, Judge(sends, r, true).Violations, "closed: 10 s still finds the estimate 60")
	// Settled at once to the estimate, the log is judged as with one cost column.
	for i := range sends {
		sends[i] = reserved(sends[i].T, sends[i].Costs["tokens"], sends[i].T, sends[i].Costs["tokens"])
	}
	plain := Judge(sends, r, false)
	assert.Equal(t, []int{1, 2}, plain.Violations)
	assert.Equal(t, big.NewInt(140), plain.Max)
}

// TestReservedBucket is docs/semantics.md's bucket example: 10 tokens/1s
// burst 100; A < E gives back, A > E takes more, a give-back stops at the
// burst.
func TestReservedBucket(t *testing.T) {
	r := Rule{N: 10, W: sec, Unit: "tokens", Kind: Bucket, Burst: 100}
	sends := []Send{
		reserved(0, 80, 2*sec, 30),
		reserved(1*sec, 40, -1, 0),
		reserved(2*sec, 40, 3*sec, 90),
		reserved(3500*ms, 20, -1, 0),
		reserved(5*sec, 20, 100*sec, 0),
		reserved(100*sec, 100, -1, 0),
		reserved(100*sec, 10, -1, 0),
	}
	for _, closed := range []bool{false, true} {
		v := Judge(sends, r, closed)
		assert.Equal(t, []int{1, 3, 6}, v.Violations)
		assert.Equal(t, []*big.Rat{big.NewRat(30, 1), big.NewRat(15, 1), big.NewRat(0, 1)}, v.Levels)
	}
	// A violating send took nothing, so its settlement gives nothing back.
	v := Judge([]Send{reserved(0, 100, -1, 0), reserved(0, 50, 0, 0), reserved(0, 1, -1, 0)}, r, false)
	assert.Equal(t, []int{1, 2}, v.Violations)
	// An actual above the estimate leaves the level below zero.
	v = Judge([]Send{reserved(0, 100, 0, 150), reserved(2*sec, 1, -1, 0)}, r, false)
	assert.Equal(t, []*big.Rat{big.NewRat(-30, 1)}, v.Levels)
}

// TestReservedFixed is docs/semantics.md's fixed example: 100 tokens/1m
// fixed; a settlement after its window ended changes nothing.
func TestReservedFixed(t *testing.T) {
	r := Rule{N: 100, W: 60 * sec, Unit: "tokens", Kind: Fixed}
	sends := []Send{
		reserved(10*sec, 90, 20*sec, 40),
		reserved(30*sec, 50, -1, 0),
		reserved(50*sec, 20, 65*sec, 0),
		reserved(70*sec, 100, -1, 0),
	}
	v := Judge(sends, r, false)
	assert.Equal(t, []int{2}, v.Violations)
	assert.Equal(t, big.NewInt(110), v.Max)
}

// TestReservedFirstCall: the window opened at 0 s counts the settled
// actual; a lone estimate over the limit opens no window.
func TestReservedFirstCall(t *testing.T) {
	r := Rule{N: 100, W: 60 * sec, Unit: "tokens", Kind: FirstCall}
	sends := []Send{
		reserved(0, 90, 1*sec, 10),
		reserved(2*sec, 90, -1, 0),
		reserved(3*sec, 10, -1, 0),
		reserved(70*sec, 150, 71*sec, 0),
		reserved(72*sec, 100, -1, 0),
	}
	v := Judge(sends, r, false)
	assert.Equal(t, []int{2, 3}, v.Violations)
	assert.Equal(t, big.NewInt(150), v.Max)
}

package difftest

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDecimal9 writes levels as reports do: rounded down to nine
// decimals, without trailing zeros.
func TestDecimal9(t *testing.T) {
	for want, r := range map[string]*big.Rat{
		"0": big.NewRat(0, 1), "0.8": big.NewRat(4, 5), "2": big.NewRat(2, 1),
		"0.333333333": big.NewRat(1, 3), "0.666666666": big.NewRat(2, 3), "12.000000001": big.NewRat(12_000_000_001, 1_000_000_000),
	} {
		assert.Equal(t, want, Decimal9(r))
	}
}

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
		require.NoError(t, CheckDeclared(rules, nil))
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
	var ue *UnitError
	assert.ErrorAs(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Unit: "tokens"}}, []string{"points"}), &ue)
	assert.NoError(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Unit: "tokens"}}, []string{"tokens"}))
	assert.NoError(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Kind: rule.Bucket, Burst: 5}}, nil))
	assert.Error(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Kind: rule.Fixed, Offset: time.Millisecond}}, nil))
	assert.Error(t, CheckDeclared([]rule.Rule{{Limit: 5, Window: time.Second, Kind: rule.FirstCall}}, nil))
}

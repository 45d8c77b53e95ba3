package scenarios

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/simulate"
)

// TestCostsValidated: each unit a rule meters needs a cost, a cost needs a
// rule metering its unit, and a bad cost names its file and line.
func TestCostsValidated(t *testing.T) {
	head := "rules: [5/1s, 100 tokens/1s]\nstrategies: [combined]\ncallers: 3\n"
	tests := []struct{ name, yaml, want string }{
		{"no cost for a unit", head,
			`my.yaml:1: rules: 100 tokens/1s meters tokens, but costs gives no tokens cost per call`},
		{"a unit no rule meters", head + "costs:\n  tokens: 10\n  points: 3\n",
			`my.yaml:6: costs: no rule meters points`},
		{"a negative cost", head + "costs: {tokens: -3}\n",
			`my.yaml:4: costs: tokens: cost "-3": "-3" is not a whole number of at least 0`},
		{"a fractional cost", head + "costs:\n  tokens: uniform(1, 2.5)\n",
			`my.yaml:5: costs: tokens: cost "uniform(1, 2.5)": "2.5" is not a whole number`},
		{"not a mapping", head + "costs: [3]\n",
			`my.yaml:4: costs: want a unit for each cost`},
		{"a strategy metering calls only", strings.Replace(head, "[combined]", "[combined, uber-ratelimit]", 1) + "costs: {tokens: 10}\n",
			`my.yaml: scenario "my": strategy uber-ratelimit meters calls only so far: it cannot run rules that meter tokens`},
		{"a kind a strategy cannot keep", "rules: [5000 tokens/1h fixed]\nstrategies: [combined, xrate-chained]\ncallers: 3\ncosts: {tokens: 1}\n",
			`my.yaml: scenario "my": strategy xrate-chained keeps sliding rules only so far: it cannot run rule 5000 tokens/1h fixed (strategies that keep every kind: sequential, combined,`},
		{"a kind the script cannot keep", "rules: [5/1s, 100/1m first-call]\nstrategies: [combined, redis]\ncallers: 3\n",
			`my.yaml: scenario "my": strategy redis: redislimit: rule 100/1m first-call: the script keeps sliding, fixed and bucket rules only so far`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("my.yaml", []byte(tt.yaml), files)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, err.Error()[:min(len(tt.want), len(err.Error()))])
		})
	}
	s, err := Parse("my.yaml", []byte("rules: [5/1s, 100 points/1s, 90 tokens/1m]\nstrategies: [combined]\ncallers: 3\ncosts:\n  tokens: 7\n  points: uniform(1, 3)\n"), files)
	require.NoError(t, err)
	assert.Equal(t, []string{"points", "tokens"}, s.Units(), "in the order the rules name them")
}

// TestCostsDrawnFromTheSeed: the same seed draws the same costs, another
// seed others; every strategy of a run sees the same costs.
func TestCostsDrawnFromTheSeed(t *testing.T) {
	s, err := Shipped("llm-api")
	require.NoError(t, err)
	a, b := s.DrawCosts(1, 500), s.DrawCosts(1, 500)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, s.DrawCosts(2, 500))
	for _, c := range a {
		assert.GreaterOrEqual(t, c, int64(0))
	}
}

// TestLLMAPISequentialOverfillsTheTokens: on the shipped llm-api scenario
// the chained limiters overfill the minute's tokens window, while
// combined and gated keep every window in the same duration within 2%;
// the output is the same byte for byte on a second run, and the run's log
// carries each send's tokens.
func TestLLMAPISequentialOverfillsTheTokens(t *testing.T) {
	s, err := Shipped("llm-api")
	require.NoError(t, err)
	res, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"sequential", "combined", "gated"}})
	require.NoError(t, err)
	tokens := -1
	for i, r := range s.Rules {
		if r.Unit == "tokens" && tokens < 0 {
			tokens = i
		}
	}
	require.GreaterOrEqual(t, tokens, 0)
	seq, comb, gated := res.Strategies[0], res.Strategies[1], res.Strategies[2]
	assert.Positive(t, seq.Rules[tokens].Violations)
	assert.Greater(t, seq.Rules[tokens].MaxInWindow, int64(s.Rules[tokens].Limit))
	for _, st := range []simulate.StrategyResult{comb, gated} {
		assert.Zero(t, st.Violations(), st.Name)
		assert.Equal(t, seq.Calls, len(st.Sends), st.Name)
		assert.InDelta(t, float64(comb.Duration), float64(st.Duration), 0.02*float64(comb.Duration), st.Name)
	}
	assert.InDelta(t, float64(comb.Duration), float64(seq.Duration), 0.02*float64(comb.Duration))
	var out1, out2 bytes.Buffer
	require.NoError(t, simulate.WriteText(&out1, res))
	res2, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"sequential", "combined", "gated"}})
	require.NoError(t, err)
	require.NoError(t, simulate.WriteText(&out2, res2))
	assert.Equal(t, out1.String(), out2.String())
	var log bytes.Buffer
	require.NoError(t, res.WriteLogOf(&log, "sequential"))
	assert.True(t, strings.HasPrefix(log.String(), "ts,tokens\n"))
	assert.Equal(t, len(seq.Sends)+1, strings.Count(log.String(), "\n"))
}

// TestLLMAPIChainedXRate: the chain clients write with x/time/rate (Wait
// on the requests limiter, then WaitN with the tokens on each tokens
// limiter) overfills the token windows of llm-api: a bucket of N tokens
// refilled at N per W lets up to 2N through in a window.
func TestLLMAPIChainedXRate(t *testing.T) {
	s, err := Shipped("llm-api")
	require.NoError(t, err)
	res, err := simulate.Run(&s.Scenario, simulate.Options{Strategies: []string{"xrate-chained"}})
	require.NoError(t, err)
	st := res.Strategies[0]
	assert.Len(t, st.Sends, st.Calls)
	var tokens int64
	for i, r := range s.Rules {
		if r.Unit != "" {
			tokens += st.Rules[i].Violations
		}
	}
	assert.Positive(t, tokens)
}

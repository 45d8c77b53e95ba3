package sendlog

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fastjson"
)

// TestCostCandidate: the name a missing cost's fix suggests, and where it
// suggests none rather than guess.
func TestCostCandidate(t *testing.T) {
	for _, tt := range []struct {
		unit, want string
		names      []string
		fix        string
	}{
		{"tokens", "tokens", []string{"ts", "total_tokens"}, "total_tokens"},
		{"tokens", "tokens", []string{"ts", "usage.prompt_tokens", "usage.completion_tokens", "usage.total_tokens"}, "usage.total_tokens"},
		{"tokens", "tokens", []string{"ts", "usage.prompt_tokens", "usage.completion_tokens"}, ""}, // two tie: no guess
		{"tokens", "tokens", []string{"ts", "usage.tokens", "total_tokens"}, "usage.tokens"},
		{"tokens", "prompt_tokens", []string{"usage.prompt_tokens", "usage.total_tokens"}, "usage.prompt_tokens"},
		{"tokens", "tokens", []string{"ts", "Total_Tokens "}, "Total_Tokens"},
		{"tokens", "tokens", []string{"ts", "tokenset", "mytokens", "tokens_x"}, "tokens_x"},
		{"tokens", "tokens", []string{"ts", "tokenset", "mytokens"}, ""},
		{"input_tokens", "input_tokens", []string{"usage.input_tokens", "usage.output_tokens"}, "usage.input_tokens"},
		{"tokens", "tokens", nil, ""},
	} {
		assert.Equal(t, tt.fix, costCandidate(tt.unit, tt.want, tt.names), "%s=%s in %v", tt.unit, tt.want, tt.names)
	}
	assert.False(t, containsWord("tokentokens", "tokens"))
	assert.True(t, containsWord("tokentokens_tokens", "tokens"))
}

// TestMissingCostNamesTheField: a JSON record or CSV header without the
// cost's field or column is an input error whose Fix names the one that
// likely holds it.
func TestMissingCostNamesTheField(t *testing.T) {
	costs := []CostSource{{Unit: "tokens", Col: "tokens", Field: "tokens"}}
	for _, tt := range []struct{ name, text, fix string }{
		{"a.jsonl", `{"ts":1,"usage":{"prompt_tokens":3,"total_tokens":4,"meta":{"x":"y"}}}` + "\n", "tokens=usage.total_tokens"},
		{"a.csv", "ts,total_tokens\n1,4\n", "tokens=total_tokens"},
		{"b.jsonl", `{"ts":1,"usage":{"prompt_tokens":3,"completion_tokens":1}}` + "\n", ""},
	} {
		_, _, err := readAll(tt.name, tt.text, Options{Unit: UnitSeconds, Costs: costs})
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%s: %v", tt.name, err)
		assert.Equal(t, int64(1), ie.Line, tt.name)
		if tt.fix == "" {
			assert.Nil(t, ie.Fix, tt.name)
			continue
		}
		require.NotNil(t, ie.Fix, "%s: %v", tt.name, err)
		assert.Equal(t, Fix{Option: "Costs", Value: tt.fix}, *ie.Fix, tt.name)
		assert.Contains(t, ie.Msg, "sendlog.Options.Costs tokens=tokens: no ", tt.name)
	}
}

// TestNumericPaths lists nested numbers, not strings or arrays.
func TestNumericPaths(t *testing.T) {
	v := fastjson.MustParse(`{"ts":1,"s":"2","a":[3],"u":{"n":4,"d":{"e":{"f":{"g":5}}}}}`)
	assert.Equal(t, []string{"ts", "u.n"}, numericPaths(v))
}

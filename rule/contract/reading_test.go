package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContractHoldsTheSetup: a contract file names where a log keeps the
// time, the key and each unit's cost, and its zone; YAML writes it back.
func TestContractHoldsTheSetup(t *testing.T) {
	text := "rules: [500/1m, 90000 tokens/1m]\ntime_col: sent_at\nunit: ms\nkey_col: api_key\ntz: Europe/Berlin\ncosts:\n  tokens: total_tokens\n"
	c, err := Parse("llm.yaml", []byte(text))
	require.NoError(t, err)
	want := Reading{TimeCol: "sent_at", Unit: "ms", KeyCol: "api_key", Zone: "Europe/Berlin", Costs: []Cost{{"tokens", "total_tokens"}}}
	assert.Equal(t, want, c.Read)
	back, err := Parse("back.yaml", c.YAML())
	require.NoError(t, err)
	assert.Equal(t, c, back)

	for bad, msg := range map[string]string{
		"rules: [5/1s]\ncosts:\n  tokens: t\n":    "llm.yaml:3: costs: tokens: want a column or field for a unit the rules meter",
		"rules: [5 tokens/1s]\ncosts: [tokens]\n": "llm.yaml:2: costs: want a mapping",
		"rules: [5/1s]\nkey_col: [a, b]\n":        "llm.yaml:2: key_col: want a name",
		"rules: [5/1s]\nkey_column: k\n":          `unknown field "key_column"`,
	} {
		_, err := Parse("llm.yaml", []byte(bad))
		assert.ErrorContains(t, err, msg, bad)
	}
}

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

func TestStatusReadingRoundTrips(t *testing.T) {
	c, err := Parse("c.yaml", []byte("rules: [500/1m]\nstatus_col: code\nrefused: free\n"))
	require.NoError(t, err)
	assert.Equal(t, "code", c.Read.StatusCol)
	assert.Equal(t, "free", c.Read.Refused)
	back, err := Parse("c.yaml", c.YAML())
	require.NoError(t, err)
	assert.Equal(t, c.Read, back.Read)

	_, err = Parse("c.yaml", []byte("rules: [500/1m]\nrefused: sometimes\n"))
	require.EqualError(t, err, `c.yaml:2: refused: want count (refused calls count toward later windows) or free (they take nothing), got "sometimes"`)
}

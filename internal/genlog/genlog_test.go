package genlog

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTokensLeaveTimesAndKeysAlone: the tokens column is added beside the
// same times and keys, each cost in 1 to MaxTokens-1.
func TestTokensLeaveTimesAndKeysAlone(t *testing.T) {
	cfg := Default(2000)
	var plain, costed bytes.Buffer
	require.NoError(t, WriteCSV(&plain, cfg))
	cfg.MaxTokens = 10
	require.NoError(t, WriteCSV(&costed, cfg))
	p := strings.Split(strings.TrimSpace(plain.String()), "\n")
	c := strings.Split(strings.TrimSpace(costed.String()), "\n")
	require.Len(t, c, len(p))
	assert.Equal(t, "ts_ns,key,tokens", c[0])
	seen := map[int64]bool{}
	for i := 1; i < len(p); i++ {
		head, tok, ok := strings.Cut(c[i][len(p[i]):], ",")
		require.True(t, ok && head == "", "line %d: %q after %q", i, c[i], p[i])
		n, err := strconv.ParseInt(tok, 10, 64)
		require.NoError(t, err)
		require.True(t, n >= 1 && n <= 9, "cost %d", n)
		seen[n] = true
	}
	assert.Len(t, seen, 9, "every cost from 1 to 9 drawn")
}

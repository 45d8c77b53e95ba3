package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsSayHowRedisSkipsShow: CONTRIBUTING.md quotes the skip message
// internal/redistest prints, and the command that shows it (go test prints
// a skip's message only with -v).
func TestDocsSayHowRedisSkipsShow(t *testing.T) {
	readme, err := os.ReadFile("../../CONTRIBUTING.md")
	require.NoError(t, err)
	src, err := os.ReadFile("../../internal/redistest/server.go")
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(string(readme)), " ")
	assert.Contains(t, flat, "go test -v ./strategies/redislimit ./cmd/rlcheck | grep -A1 -- '--- SKIP'")
	assert.Contains(t, flat, "`go test ./...` still prints only `ok`")
	assert.NotContains(t, flat, "loud message")
	assert.Contains(t, string(src), `"SKIPPING: %s; set %s=1 to fail instead"`)
	assert.Contains(t, flat, "SKIPPING: redis-server not found on PATH: this test needs a real Redis (Debian: apt-get install redis-server redis-tools); set RLCHECK_REQUIRE_REDIS=1 to fail instead")
}

package redislimit

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoEmbeddedServerLinked: a program that imports redislimit links no
// in-process Redis; that lives in redislimit/embedded.
func TestNoEmbeddedServerLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to list dependencies with")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := string(out)
	require.Contains(t, deps, "github.com/redis/go-redis/v9", "the listing is not of redislimit's dependencies")
	for _, banned := range []string{"github.com/alicebob/miniredis", "github.com/yuin/gopher-lua"} {
		assert.False(t, strings.Contains(deps, banned), "redislimit links %s", banned)
	}
}

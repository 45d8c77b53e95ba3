package plots

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// keep writes the smoke-test charts to a directory for a person to look at:
// go test ./plots -run Render -keep /tmp/plots
var keep = flag.String("keep", "", "write rendered charts to this directory")

func outDir(t *testing.T) string {
	t.Helper()
	if *keep == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(*keep, 0o755))
	return *keep
}

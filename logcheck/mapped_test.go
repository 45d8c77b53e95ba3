package logcheck

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/genlog"
	"github.com/rlcheck/rlcheck/rule"
)

// TestOpenedFileAsRead checks a log file large enough to be mapped (see
// sendlog's Reader) through Open, against the same bytes from a reader:
// the results must be the same, whole and per key.
func TestOpenedFileAsRead(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, genlog.WriteCSV(&buf, genlog.Default(120_000)))
	require.Greater(t, buf.Len(), 2<<20, "a log large enough to be mapped")
	name := filepath.Join(t.TempDir(), "sends.csv")
	require.NoError(t, os.WriteFile(name, buf.Bytes(), 0o600))
	rules, err := rule.ParseList("10/1s,500/1m,600000/24h")
	require.NoError(t, err)
	for _, key := range []string{"", "key"} {
		cfg := Config{Rules: rules, List: 3}
		cfg.Read.KeyCol = key
		inputs, _, closeAll, err := Open([]string{name}, strings.NewReader(""))
		require.NoError(t, err)
		_, isFile := inputs[0].R.(*os.File)
		require.True(t, isFile, "Open hands the Reader the file itself, which it maps")
		got, err := Run(inputs, cfg)
		closeAll()
		require.NoError(t, err)
		want, err := Run([]Input{{Name: name, R: bytes.NewReader(buf.Bytes())}}, cfg)
		require.NoError(t, err)
		require.Equal(t, int64(120_000), got.Sends)
		require.Equal(t, want, got, "key column %q", key)
	}
}

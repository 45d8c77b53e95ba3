package plots

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTradeOffLabels(t *testing.T) {
	assert.Equal(t, "exact log: 100.0%, 86,336 B", tradeOffLabel(TradeOffPoint{Name: "exact log", Bytes: 86336, Utilisation: 1}))
	assert.Equal(t, "fixed window: 101.3%, 48 B, 1,204 violations",
		tradeOffLabel(TradeOffPoint{Name: "fixed window", Bytes: 48, Utilisation: 1.0134, Violations: 1204}))
}

func TestTradeOffWritesAndRefuses(t *testing.T) {
	dir := t.TempDir()
	pts := []TradeOffPoint{{Name: "combined", Bytes: 86336, Utilisation: 1}, {Name: "fixed", Bytes: 48, Utilisation: 1.01, Violations: 3}}
	path := filepath.Join(dir, "t.svg")
	require.NoError(t, TradeOff(path, "x", pts))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Positive(t, st.Size())
	assert.Error(t, TradeOff(filepath.Join(dir, "t.gif"), "x", pts), "extension")
	assert.Error(t, TradeOff(filepath.Join(dir, "e.svg"), "x", nil), "no points")
	assert.Error(t, TradeOff(filepath.Join(dir, "z.svg"), "x", []TradeOffPoint{{Name: "z"}}), "zero bytes on a log axis")
}

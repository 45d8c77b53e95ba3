package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/strategies/catalog"
)

func mustDesign(t testing.TB, name string) design {
	t.Helper()
	d, ok := lookupDesign(name)
	require.True(t, ok, name)
	return d
}

// TestDesignsAreTheCatalogs: the audit's registry holds every strategy
// `rlcheck audit` audits by default, in the catalog's order, and each
// constructs with the default setting.
func TestDesignsAreTheCatalogs(t *testing.T) {
	var names []string
	for _, d := range goDesigns() {
		names = append(names, d.Name())
		_, err := d.Construct(DefaultOptions(nil).Config)
		assert.NoError(t, err, d.Name())
		assert.Equal(t, d.NoCosts() == "", catalog.LibCosts(d.Name()), "%s meters costs as the catalog says", d.Name())
	}
	assert.Equal(t, catalog.AuditStrategyNames(), names)
}

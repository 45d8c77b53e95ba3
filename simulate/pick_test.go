package simulate

import (
	"github.com/rlcheck/rlcheck/workload"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPick(t *testing.T) {
	s := &workload.Scenario{Strategies: []string{"sequential", "combined"}}
	got, err := s.Pick("")
	require.NoError(t, err)
	assert.Equal(t, "sequential", got, "no name picks the first strategy")
	got, err = s.Pick("combined")
	require.NoError(t, err)
	assert.Equal(t, "combined", got)
	_, err = s.Pick("gated")
	assert.ErrorContains(t, err, `"gated" is not among the strategies run (sequential, combined)`)
}

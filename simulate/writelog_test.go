package simulate

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteLogNineDigits(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteLog(&b, []int64{0, 5_153_000, 7_005_153_000, 12_000_000_001}))
	assert.Equal(t, "0.000000000\n0.005153000\n7.005153000\n12.000000001\n", b.String())
}

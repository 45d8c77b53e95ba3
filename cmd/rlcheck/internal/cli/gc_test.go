package cli

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGCPercent(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := GCPercent(400)
	assert.Equal(t, 400, debug.SetGCPercent(400), "set while GOGC is unset")
	restore()
	assert.Equal(t, 100, debug.SetGCPercent(100), "restored")

	t.Setenv("GOGC", "150")
	restore = GCPercent(400)
	assert.Equal(t, 100, debug.SetGCPercent(100), "the user's GOGC wins")
	restore()
}

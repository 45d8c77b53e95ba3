package serve

import (
	"testing"

	"github.com/rlcheck/rlcheck/internal/testrun"
)

// TestMain runs up to 4 parallel tests at once: the parallel tests here
// wait on Node and Python clients and on the real clock, not on the CPU.
func TestMain(m *testing.M) { testrun.Main(m, 4) }

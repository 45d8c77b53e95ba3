package infer

import (
	"testing"

	"github.com/rlcheck/rlcheck/internal/testrun"
)

// TestMain runs the tests with the collector's target of testrun.Main.
func TestMain(m *testing.M) { testrun.Main(m, 0) }

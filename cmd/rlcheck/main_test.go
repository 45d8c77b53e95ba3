package main

import (
	"testing"

	"github.com/rlcheck/rlcheck/internal/testrun"
)

// TestMain runs up to 4 parallel tests at once: the parallel tests here
// wait on adapter programs, Redis servers and the real clock more than on
// the CPU.
func TestMain(m *testing.M) { testrun.Main(m, 4) }

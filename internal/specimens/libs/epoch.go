package libs

import "time"

// Epoch is where virtual instant 0 lands on the libraries' time.Time axis.
// It must not be the Unix epoch: go.uber.org/ratelimit reads a state of 0 as
// "never used", which would hand out a free permission at instant 0 forever.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// timeAt converts a runtime instant to the libraries' time.Time.
func timeAt(ns int64) time.Time { return Epoch.Add(time.Duration(ns)) }

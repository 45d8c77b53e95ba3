//go:build race

package scenarios

func init() { raceEnabled = true }

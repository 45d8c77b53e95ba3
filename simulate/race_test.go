//go:build race

package simulate

func init() { raceEnabled = true }

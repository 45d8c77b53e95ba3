//go:build race

package logcheck

func init() { raceEnabled = true }

// Package adapters holds the adapter programs that ship with rlcheck, one
// folder each (python/: asyncio on virtual time, standard library only),
// and the Go tests that run their own tests and hold them to the Go
// strategies on the shipped scenarios. It has no Go code to import.
package adapters

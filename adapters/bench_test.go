package adapters

import (
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/scenarios"
	"github.com/rlcheck/rlcheck/simulate"
)

// BenchmarkSeedThousandSeeds is `rlcheck simulate seed --runs 1000` over
// the guide's two designs: Go's sequential and combined, and the same
// two in Python through the adapter (its processes started once, outside
// the timing). One op is 1,000 seeds of both strategies; node is 1,000
// seeds of the Node template's sliding log and of Bottleneck's chained
// reservoirs, each a strategy of its own.
func BenchmarkSeedThousandSeeds(b *testing.B) {
	sc, err := scenarios.Shipped("seed")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			if _, err := simulate.RunSeeds(&sc.Scenario, 1000, simulate.Options{Strategies: []string{"sequential", "combined"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("python", func(b *testing.B) {
		py := needPython(b)
		prog, err := adapter.Open(adapter.Config{Command: py + " python/guide.py"})
		if err != nil {
			b.Fatal(err)
		}
		defer prog.Close()
		for b.Loop() {
			if _, err := simulate.RunSeeds(&sc.Scenario, 1000, simulate.Options{Strategies: []string{}, Exec: prog}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, script := range []string{"my_limiter.mjs", "limiters.mjs node-bottleneck-reservoirs"} {
		b.Run("node/"+strings.Fields(script)[0], func(b *testing.B) {
			prog := openNode(b, script)
			for b.Loop() {
				if _, err := simulate.RunSeeds(&sc.Scenario, 1000, simulate.Options{Strategies: []string{}, Exec: prog}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package infer

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// BenchmarkInfer1M infers a million calls replayed through 7/1s and
// 40/10s: 17 windows, 2 kinds, both readings.
func BenchmarkInfer1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := infertest.NewProvider([]rule.Rule{{Limit: 7, Window: time.Second}, {Limit: 40, Window: 10 * time.Second}}, true)
	log := replay(p, infertest.Traffic(rng, rule.Rule{Limit: 7, Window: time.Second}, 1_000_000))
	b.ResetTimer()
	for range b.N {
		Infer(log, Options{})
	}
}

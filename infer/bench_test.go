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

// BenchmarkInfer1MBucket infers a million calls replayed through
// 7/1s burst 20 and 40/10s: the bucket search, the exact search for a
// bucket alone and beside each window, and the bucket's region.
func BenchmarkInfer1MBucket(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	hidden := []rule.Rule{{Limit: 7, Window: time.Second, Kind: rule.Bucket, Burst: 20}, {Limit: 40, Window: 10 * time.Second}}
	log := replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, rule.Rule{Limit: 7, Window: time.Second}, 1_000_000))
	b.ResetTimer()
	for range b.N {
		res := Infer(log, Options{})
		if b.N == 1 {
			b.Logf("%s", RulesText(res.Fits[res.Best].Rules))
		}
	}
}

// BenchmarkInfer1MDelayedBucket infers the client's log of a million calls
// sent through 7/1s burst 20 and 40/10s, each reaching the provider up to
// 5 ms after it was sent: no contract fits exactly, and the tolerance
// climbs the ladder of spreads with the windows and the buckets.
func BenchmarkInfer1MDelayedBucket(b *testing.B) {
	hidden := []rule.Rule{{Limit: 7, Window: time.Second, Kind: rule.Bucket, Burst: 20}, {Limit: 40, Window: 10 * time.Second}}
	log := delayedN(hidden, 1, 5*time.Millisecond, 1_000_000)
	b.ResetTimer()
	for range b.N {
		res := Infer(log, Options{})
		if b.N == 1 && res.Tolerance != nil {
			u := res.Tolerance.Used()
			b.Logf("exact fit %v; within %v: %s (fits %v)", res.Fits[res.Best].Fits, res.Tolerance.Spread, RulesText(u.Rules), res.Tolerance.Fits)
		}
	}
}

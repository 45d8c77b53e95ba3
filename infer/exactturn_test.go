package infer

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// exactInTurn is the exact buckets' search walked one reading after the
// other on one budget of steps, a region walked only while the steps
// spent are within it: the order exactWithin's answer must match.
func exactInTurn(d *sends, cands []Candidate, budget int64) (covered [2]int, proof [2]bucketProof, buckets []Candidate, spent int64) {
	n := len(d.refIdx)
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		covered[rd] = windowCover(n, cands, rd)
		proof[rd] = bucketProof{single: covered[rd] == 1, pairs: covered[rd] <= 2}
		if covered[rd] == 1 {
			continue
		}
		targets := []bitset{complement(n, newBitset(n))}
		if covered[rd] > 2 {
			for _, w := range maximalWindows(cands, rd) {
				targets = append(targets, complement(n, w.set))
			}
		}
		proof[rd] = bucketProof{single: true, pairs: true}
		for k, target := range targets {
			for u := -1; u < len(d.units) && covered[rd] > 1; u++ {
				if spent > budget {
					proof[rd].pairs = proof[rd].pairs && k == 0 && covered[rd] > 2
					proof[rd].single = proof[rd].single && k > 0
					continue
				}
				g := newRegionFit(d, u, rd, target)
				rg := g.region()
				if spent += g.steps; spent > budget || !rg.Empty && !rg.Exact {
					proof[rd].pairs = proof[rd].pairs && k == 0 && covered[rd] > 2
					proof[rd].single = proof[rd].single && k > 0
					continue
				}
				if rg.Exact {
					buckets = append(buckets, d.bucketPoint(u, uint64(rg.RateMin), rg.BurstMax, rd))
					covered[rd] = min(covered[rd], k+1, 2)
				}
			}
		}
	}
	return covered, proof, buckets, spent
}

// TestExactBucketsAsWalkedInTurn checks the exact buckets found with the
// two readings walked side by side against walking them in turn, with
// budgets from none to more than every walk takes: a budget that runs out
// in the second reading's walk must stop it where walking in turn would.
func TestExactBucketsAsWalkedInTurn(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 11))
	cut := 0
	for seed := range 60 {
		tokens := seed%2 == 1
		bucket := rule.Rule{Kind: rule.Bucket, Limit: 1 + rng.IntN(4), Window: time.Duration(1+rng.IntN(3)) * time.Second, Burst: 1 + rng.IntN(6)}
		if tokens {
			bucket.Unit = infertest.Tokens
		}
		hidden := []rule.Rule{bucket, {Kind: rule.Sliding, Limit: 2 + rng.IntN(4), Window: 2 * time.Second}}
		if seed%3 != 0 {
			hidden = append(hidden, rule.Rule{Kind: rule.Fixed, Limit: 5 + rng.IntN(6), Window: 10 * time.Second})
		}
		s := replayTraffic(rng, infertest.NewProvider(hidden, seed%4 < 2), tokens, 40+rng.IntN(80), 4, 300)
		d, _ := regionSends(s)
		cands := append(windowCandidates(d, windowGrid), costCandidates(d, windowGrid)...)
		_, _, _, all := exactInTurn(d, cands, math.MaxInt64)
		for _, budget := range []int64{-1, 0, all / 3, all / 2, all - 1, all, math.MaxInt64} {
			covered, proof, buckets, spent := exactInTurn(d, cands, budget)
			res := &Result{Candidates: cands}
			require.Equal(t, covered, res.exactWithin(d, budget), "seed %d, budget %d", seed, budget)
			require.Equal(t, proof, res.proof, "seed %d, budget %d", seed, budget)
			require.Equal(t, buckets, res.Buckets, "seed %d, budget %d", seed, budget)
			require.Equal(t, spent, res.BucketSteps, "seed %d, budget %d", seed, budget)
			if budget >= 0 && budget < all {
				cut++
			}
		}
	}
	require.Greater(t, cut, 100, "budgets that ran out within the walks")
}

package infer

import (
	"cmp"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/stretchr/testify/require"
)

var refLogs = flag.String("write-ref-logs", "", "write generated logs for comparing rlcheck infer's output across changes to this directory")

// TestWriteRefLogs writes, with -write-ref-logs DIR, logs of 20,000 calls
// through drawn contracts (windows and buckets, calls and tokens), exact
// and with each call reaching the provider up to 2 ms or 5 ms after it
// was sent: a corpus to compare rlcheck infer's answers before and after
// a change. Without the flag it skips.
func TestWriteRefLogs(t *testing.T) {
	if *refLogs == "" {
		t.Skip("no -write-ref-logs directory")
	}
	require.NoError(t, os.MkdirAll(*refLogs, 0o755))
	const calls = 20_000
	for seed := range uint64(16) {
		rng := rand.New(rand.NewPCG(seed, 77))
		tokens := seed%4 >= 2
		rules, pace, mean := infertest.BucketContract(rng, tokens)
		if seed%2 == 1 {
			rules = infertest.Contract(rng)
			pace, mean = rules[0], 1
			if tokens {
				rules, pace, mean = infertest.CostContract(rng)
			}
		}
		ms := infertest.Traffic(rng, pace, calls)
		costs := infertest.Costs(rng, calls, mean)
		for _, late := range []time.Duration{0, 2 * time.Millisecond, 5 * time.Millisecond} {
			log := lateReplay(infertest.NewProvider(rules, true), rng, ms, costs, late)
			name := filepath.Join(*refLogs, fmt.Sprintf("gen-%02d-%dms.csv", seed, late.Milliseconds()))
			f, err := os.Create(name)
			require.NoError(t, err)
			if tokens {
				require.NoError(t, infertest.WriteCostCSV(f, log))
			} else {
				require.NoError(t, infertest.WriteCSV(f, log))
			}
			require.NoError(t, f.Close())
		}
	}
}

// lateReplay sends the traffic (ms) through p, each call reaching it up
// to late after it was sent, and returns the log of the instants sent.
func lateReplay(p *infertest.Provider, rng *rand.Rand, ms, costs []int64, late time.Duration) []infertest.Call {
	type call struct {
		i       int
		arrived int64
	}
	byArrival := make([]call, len(ms))
	for i, m := range ms {
		byArrival[i] = call{i, m*int64(time.Millisecond) + rng.Int64N(int64(late)+1)}
	}
	slices.SortStableFunc(byArrival, func(a, b call) int { return cmp.Compare(a.arrived, b.arrived) })
	out := make([]infertest.Call, len(ms))
	for _, c := range byArrival {
		out[c.i] = infertest.Call{At: ms[c.i] * int64(time.Millisecond), Refused: p.CallCost(c.arrived, costs[c.i]), Cost: costs[c.i]}
	}
	return out
}

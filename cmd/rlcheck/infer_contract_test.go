package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/rule"
)

// inferLog is a log of calls with statuses, and the flag that names its
// cost column.
type inferLog struct {
	name string
	data []byte
	cost bool
}

// inferLogs draws logs of a hidden contract of case c: serve's own log
// and a provider's log, each under both readings of refused calls.
func inferLogs(t *testing.T, seed uint64, c serveprobe.Case) []inferLog {
	rng := rand.New(rand.NewPCG(seed, uint64(c.Kind)*2+map[bool]uint64{true: 1}[c.Cost]))
	hidden := serveprobe.Contract(rng, c)
	var out []inferLog
	for _, reading := range []rule.Refusals{rule.RefusedCount, rule.RefusedFree} {
		run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: 500, Refusals: reading})
		require.NoError(t, err)
		out = append(out, inferLog{name: fmt.Sprintf("serve %v %v %v seed %d", c, hidden, reading, seed), data: run.ServeLog, cost: c.Cost})
	}
	ms := infertest.Traffic(rng, hidden[0], 500)
	for _, count := range []bool{true, false} {
		var b bytes.Buffer
		p := infertest.NewProvider(hidden, count)
		if c.Cost {
			require.NoError(t, infertest.WriteCostCSV(&b, infertest.ReplayCosts(p, ms, infertest.Costs(rng, len(ms), 4))))
		} else {
			require.NoError(t, infertest.WriteCSV(&b, infertest.Replay(p, ms)))
		}
		out = append(out, inferLog{name: fmt.Sprintf("provider %v %v refused count=%v seed %d", c, hidden, count, seed), data: b.Bytes(), cost: c.Cost})
	}
	return out
}

// TestInferredContractKeepsItsLog: the contract infer --write-contract
// writes for a log it explains exactly (exit 0) judges that very log
// clean under check --contract with no other flag: the contract carries
// the rules, the status column, the cost column and the reading of
// refused calls infer found. Logs of every kind, calls and costs, from
// serve and from a provider under both readings.
func TestInferredContractKeepsItsLog(t *testing.T) {
	dir := t.TempDir()
	fitted, total := 0, 0
	for _, kind := range []rule.Kind{rule.Sliding, rule.Fixed, rule.Bucket} {
		for _, cost := range []bool{false, true} {
			c := serveprobe.Case{Kind: kind, Cost: cost}
			for seed := range uint64(testrun.Seeds(2, 20)) {
				for _, lg := range inferLogs(t, seed, c) {
					total++
					logPath, contractPath := filepath.Join(dir, "calls.csv"), filepath.Join(dir, "c.yaml")
					require.NoError(t, os.WriteFile(logPath, lg.data, 0o644))
					_ = os.Remove(contractPath)
					args := []string{"infer", "--write-contract", contractPath}
					if lg.cost {
						args = append(args, "--cost", "tokens")
					}
					_, stderr, code := run(t, "", append(args, logPath)...)
					if code != 0 {
						continue // infer does not explain this log exactly
					}
					fitted++
					out, stderr, code := run(t, "", "check", "--contract", contractPath, logPath)
					written, _ := os.ReadFile(contractPath)
					if !assert.Equal(t, 0, code, "%s\ncontract:\n%s\n%s%s", lg.name, written, out, stderr) {
						return
					}
					assert.Contains(t, out, "OK: every rule held", lg.name)
				}
			}
		}
	}
	// The property is about the logs infer explains: most must be.
	assert.Greater(t, fitted, total/2, "infer explained %d of %d logs", fitted, total)
	t.Logf("infer explained %d of %d logs; each kept its written contract", fitted, total)
}

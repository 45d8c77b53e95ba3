package infer_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

func TestZZDump(t *testing.T) {
	for _, c := range []serveprobe.Case{{Kind: rule.Bucket}, {Kind: rule.Bucket, Cost: true}} {
		for _, seed := range []uint64{1, 6, 17, 31, 39, 40, 44, 48, 52, 64, 69, 80, 81, 82} {
			hidden := serveprobe.Contract(rand.New(rand.NewPCG(seed, 30)), c)
			run, _ := serveprobe.Probe(hidden, serveprobe.Options{Seed: seed, Budget: groundBudget, MaxDelay: groundDelay})
			log, _ := run.ServedLog()
			b, _ := json.Marshal(map[string]any{"hidden": rule.Rule.String(hidden[0]), "units": run.Units(), "log": log})
			os.WriteFile(fmt.Sprintf("/tmp/ib/log-%v-%d.json", c.Cost, seed), b, 0o644)
		}
	}
}

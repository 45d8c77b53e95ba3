package difftest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
)

// statuses draws an HTTP status per send: mostly 200, often 429, now and
// then 503.
func statuses(rng *rand.Rand, n int) []int {
	out := make([]int, n)
	for i := range out {
		switch r := rng.IntN(10); {
		case r < 6:
			out[i] = 200
		case r < 9:
			out[i] = 429
		default:
			out[i] = 503
		}
	}
	return out
}

// withStatus adds a status column to the case's CSV.
func withStatus(csv string, status []int) string {
	lines := strings.Split(strings.TrimSuffix(csv, "\n"), "\n")
	lines[0] += ",status"
	for i := range status {
		lines[i+1] += fmt.Sprintf(",%d", status[i])
	}
	return strings.Join(lines, "\n") + "\n"
}

// expectStatuses judges the case as docs/semantics.md reads a log with
// statuses, by the oracle: the 2xx sends, with the 429 ones among them
// under RefusedCount, are the stream; the violations of 2xx sends are the
// verdict, those of 429 sends the refusals each rule explains.
func expectStatuses(c Case, status []int, reading rule.Refusals) (map[string][]Verdict, map[string][]int64) {
	byKey := map[string][]int{}
	for i, s := range c.Sends {
		if status[i] == 200 || status[i] == 429 && reading == rule.RefusedCount {
			byKey[s.Key] = append(byKey[s.Key], i)
		}
	}
	rules := OracleRules(c.Rules)
	verdicts, explained := map[string][]Verdict{}, map[string][]int64{}
	for key, idx := range byKey {
		sends := make([]oracle.Send, len(idx))
		for j, i := range idx {
			s := c.Sends[i]
			sends[j] = oracle.Send{T: s.At, Costs: s.Costs}
			if status[i] == 200 { // a refused send counts its estimate, never settled
				sends[j].Settled, sends[j].Actual = s.Settled, s.Actual
			}
		}
		for _, v := range oracle.JudgeAll(sends, rules, c.Boundary == rule.Closed) {
			got := fromOracle(v, idx)
			kept, n := Verdict{Max: got.Max}, int64(0)
			for k, line := range got.Lines {
				if status[line-2] == 429 {
					n++
					continue
				}
				kept.Lines = append(kept.Lines, line)
				if got.Levels != nil {
					kept.Levels = append(kept.Levels, got.Levels[k])
				}
			}
			verdicts[key] = append(verdicts[key], kept)
			explained[key] = append(explained[key], n)
		}
	}
	return verdicts, explained
}

// TestCheckStatusesMatchOracle: a log judged by its statuses, under both
// readings of refused calls, every kind: the very 2xx sends that violate,
// the fullest window, a bucket's levels, and the refusals each rule
// explains are those of the oracle run on the sends the reading keeps.
func TestCheckStatusesMatchOracle(t *testing.T) {
	for _, reading := range []rule.Refusals{rule.RefusedCount, rule.RefusedFree} {
		for _, f := range Families {
			t.Run(reading.Word()+"/"+f.String(), func(t *testing.T) {
				for i, c := range draws(f, testrun.Seeds(8, 200), 7) {
					status := statuses(rand.New(rand.NewPCG(uint64(i), 11)), len(c.Sends))
					read := c.ReadOptions()
					read.StatusCol = "status"
					res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(withStatus(c.CSV(), status))}},
						logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: read, Refusals: reading})
					require.NoError(t, err, c.String())
					want, wantExplained := expectStatuses(c, status, reading)
					got := FromResult(res)
					gotExplained := map[string][]int64{}
					for _, g := range res.Groups {
						for _, rr := range g.Report.Rules {
							gotExplained[g.Key] = append(gotExplained[g.Key], rr.Explained)
						}
					}
					if !assert.Equal(t, want, got, "seed %d: %s", i, c) || !assert.Equal(t, wantExplained, gotExplained, "seed %d: %s", i, c) {
						return
					}
				}
			})
		}
	}
}

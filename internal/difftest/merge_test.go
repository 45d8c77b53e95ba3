package difftest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/merge"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// cuts draws 1 to 3 instants to cut the case's log at: a send's instant
// (ties then fall on both sides of nothing: the cut is before them), one
// nanosecond after one, or any instant within the log.
func cuts(rng *rand.Rand, c Case) []int64 {
	first, last := c.Sends[0].At, c.Sends[len(c.Sends)-1].At
	var out []int64
	for range 1 + rng.IntN(3) {
		at := c.Sends[rng.IntN(len(c.Sends))].At + rng.Int64N(2)
		if rng.IntN(3) == 0 && last > first {
			at = first + 1 + rng.Int64N(last-first)
		}
		if at > first {
			out = append(out, at)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// contextStart is the index of the first send a shard from `from` may
// read: at or before from minus each rule's reach (a window, a nanosecond
// more when closed), and before the start of each fixed rule's window that
// holds from; -1 when no send is early enough, or a rule needs the log
// from its start (a bucket's level, a first-call window's).
func contextStart(c Case, from int64) int {
	need := from
	for _, r := range c.Rules {
		switch {
		case r.Kind == rule.Bucket || r.Kind == rule.FirstCall:
			return -1
		case r.Kind == rule.Fixed && r.Zone != "":
			need = min(need, oracle.DayStart(from, OracleRules([]rule.Rule{r})[0].Zone)-1)
		case r.Kind == rule.Fixed:
			w, o := int64(r.Window), int64(r.Offset)
			need = min(need, from-((from-o)%w+w)%w-1)
		case c.Boundary == rule.Closed:
			need = min(need, from-int64(r.Window)-1)
		default:
			need = min(need, from-int64(r.Window))
		}
	}
	start := -1
	for i, s := range c.Sends {
		if s.At <= need {
			start = i
		}
	}
	return start
}

// shardDocs checks the case in shards cut at bounds, each as `check
// --from --to --format json` on an input holding enough context before
// its start (some more at random), or the log from its first line with
// LogStart, and returns their JSON reports.
func shardDocs(t *testing.T, rng *rand.Rand, c Case, bounds []int64) (names []string, docs [][]byte) {
	t.Helper()
	lines := strings.SplitAfter(strings.TrimSuffix(c.CSV(), "\n"), "\n")
	for k := 0; k <= len(bounds); k++ {
		sh := &report.Shard{}
		start := 0 // the first send of the shard's input
		if k > 0 {
			sh.From, sh.HasFrom = bounds[k-1], true
			start = contextStart(c, sh.From)
			if start < 0 || rng.IntN(4) == 0 {
				start, sh.LogStart = 0, true
			} else {
				start = rng.IntN(start + 1)
			}
		}
		if k < len(bounds) {
			sh.To, sh.HasTo = bounds[k], true
		}
		sh.LineOffset = int64(start)
		input := lines[0] + strings.Join(lines[1+start:], "")
		res, err := logcheck.Run([]logcheck.Input{{Name: "sends.csv", R: strings.NewReader(input)}},
			logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: c.ReadOptions(), Shard: sh})
		require.NoError(t, err, "shard %d of %v: %s", k, bounds, c)
		var buf bytes.Buffer
		require.NoError(t, report.Write(&buf, []*report.Result{res}, report.Options{Format: "json"}))
		names, docs = append(names, fmt.Sprintf("shard%d.json", k)), append(docs, buf.Bytes())
	}
	return names, docs
}

// TestMergeMatchesOracle: a log of every kind cut at random instants,
// each shard checked with --from/--to and enough context (or the log from
// its start, which buckets and first-call windows need), merges into the
// oracle's verdict on the whole log: the very violating sends, per key,
// the fullest window and a bucket's levels.
func TestMergeMatchesOracle(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			for i, c := range draws(f, testrun.Seeds(6, 150), 5) {
				rng := rand.New(rand.NewPCG(uint64(i), 55))
				bounds := cuts(rng, c)
				names, docs := shardDocs(t, rng, c, bounds)
				merged, err := merge.Reports(names, docs, merge.Options{List: len(c.Sends) + 1})
				require.NoError(t, err, "cut at %v: %s", bounds, c)
				if !assert.Equal(t, Expect(c), FromResult(merged), "seed %d, cut at %v: %s", i, bounds, c) {
					return
				}
			}
		})
	}
}

package logcheck

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// costSend is one send of a weighted log, as the oracle sees it.
type costSend struct {
	at        int64 // ms
	file      int
	line      int64
	key       string
	tokens, p int64
}

// oracleCosts counts, by brute force over every pair, each rule's
// violations per key: send i breaks "N UNIT / W" when the UNIT cost of the
// sends before it (time, then file, then line) whose gap to it is inside
// the window, plus its own, exceeds N; a call rule costs 1 a send. It is
// written from docs/semantics.md, apart from the checker.
func oracleCosts(sends []costSend, rules []rule.Rule, b rule.Boundary) map[string][]int64 {
	order := slices.Clone(sends)
	slices.SortStableFunc(order, func(x, y costSend) int {
		if x.at != y.at {
			return int(x.at - y.at)
		}
		if x.file != y.file {
			return x.file - y.file
		}
		return int(x.line - y.line)
	})
	cost := func(s costSend, r rule.Rule) int64 {
		switch r.Unit {
		case "":
			return 1
		case "tokens":
			return s.tokens
		}
		return s.p
	}
	out := map[string][]int64{}
	for i, s := range order {
		if out[s.key] == nil {
			out[s.key] = make([]int64, len(rules))
		}
		for ri, r := range rules {
			sum := cost(s, r)
			for _, e := range order[:i] {
				gap := time.Duration(s.at-e.at) * time.Millisecond
				inside := gap < r.Window || (b == rule.Closed && gap == r.Window)
				if e.key == s.key && inside {
					sum += cost(e, r)
				}
			}
			if sum > int64(r.Limit) {
				out[s.key][ri]++
			}
		}
	}
	return out
}

// randomCostLog returns sends over up to three files, with ties, gaps of
// exactly a window, and costs of 0, 1, N and N+1 among others.
func randomCostLog(rng *rand.Rand, rules []rule.Rule) []costSend {
	var sends []costSend
	at := int64(0)
	lines := []int64{1, 1, 1}
	for range 30 + rng.IntN(120) {
		switch rng.IntN(4) {
		case 0: // a tie
		case 1:
			at += []int64{1000, 2000, 500}[rng.IntN(3)] // a window exactly
		default:
			at += rng.Int64N(400)
		}
		pick := func(n int64) int64 { return []int64{0, 1, n, n + 1, rng.Int64N(n + 2)}[rng.IntN(5)] }
		f := rng.IntN(3)
		lines[f]++
		sends = append(sends, costSend{at: at, file: f, line: lines[f], key: []string{"a", "b"}[rng.IntN(2)],
			tokens: pick(int64(rules[1].Limit)), p: pick(int64(rules[2].Limit))})
	}
	return sends
}

// costFiles writes the sends of each file as CSV, shuffled within 300 ms
// so that the reorder buffer puts them back in place, the second file
// gzipped.
func costFiles(t *testing.T, rng *rand.Rand, sends []costSend) []Input {
	var rows [3][]costSend
	for _, s := range sends {
		rows[s.file] = append(rows[s.file], s)
	}
	var inputs []Input
	for f, rs := range rows {
		lines := []string{"ts_ms,key,tokens,points"}
		ats := []int64{-1}
		for _, s := range rs {
			for int64(len(lines)) < s.line-1 {
				lines, ats = append(lines, ""), append(ats, -1) // keep line numbers
			}
			lines = append(lines, fmt.Sprintf("%d,%s,%d,%d", s.at, s.key, s.tokens, s.p))
			ats = append(ats, s.at)
		}
		for i := 1; i+1 < len(lines); i++ { // swap neighbours 1 to 300 ms apart
			if rng.IntN(4) == 0 && ats[i] >= 0 && ats[i+1] >= 0 && ats[i+1] > ats[i] && ats[i+1]-ats[i] <= 300 { // ties keep their order
				lines[i], lines[i+1] = lines[i+1], lines[i]
				ats[i], ats[i+1] = ats[i+1], ats[i]
				i++
			}
		}
		text := strings.Join(lines, "\n") + "\n"
		data := []byte(text)
		if f == 1 {
			data = gz(t, text)
		}
		inputs = append(inputs, Input{Name: fmt.Sprintf("f%d.csv", f), R: bytes.NewReader(data)})
	}
	return inputs
}

// TestCostsAgainstBruteForce: check with cost rules, call rules beside
// them, per key, over several files (one gzipped) a little out of order,
// in both boundary modes, counts what the oracle counts.
func TestCostsAgainstBruteForce(t *testing.T) {
	rules, err := rule.ParseList("3/1s, 10 tokens/2s, 5 points/500ms")
	require.NoError(t, err)
	costs := []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}, {Unit: "points", Col: "points"}}
	rng := rand.New(rand.NewPCG(28, 1))
	for iter := range 300 {
		sends := randomCostLog(rng, rules)
		b := rule.Boundary(iter % 2)
		want := oracleCosts(sends, rules, b)
		res, err := Run(costFiles(t, rng, sends), Config{Rules: rules, Boundary: b, MaxDisorder: time.Second,
			Read: sendlog.Options{KeyCol: "key", Costs: costs}})
		require.NoError(t, err, "iter %d", iter)
		got := map[string][]int64{}
		for _, g := range res.Groups {
			for _, r := range g.Report.Rules {
				got[g.Key] = append(got[g.Key], r.Violations)
			}
		}
		require.Equal(t, want, got, "iter %d boundary %v", iter, b)
		assert.Equal(t, int64(len(sends)), res.Sends)
	}
}

// TestCostsMissingIsAnInputError: a cost rule needs every send's cost.
func TestCostsMissingIsAnInputError(t *testing.T) {
	rules, err := rule.ParseList("10 tokens/1s")
	require.NoError(t, err)
	_, err = Run([]Input{{Name: "a.csv", R: strings.NewReader("ts_ms,tokens\n1,5\n2,-1\n")}},
		Config{Rules: rules, Read: sendlog.Options{Costs: []sendlog.CostSource{{Unit: "tokens", Col: "tokens"}}}})
	assert.EqualError(t, err, `a.csv:3: tokens cost "-1": negative: "2,-1"`)
	var ie *sendlog.InputError
	assert.ErrorAs(t, err, &ie)
	_ = report.Result{}
}

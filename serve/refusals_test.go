package serve

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
)

// refusedByBruteForce says, by the definitions, which of the requests at
// ats with token costs a contract of one call rule and one token rule
// (both sliding, half-open) refuses, each judged against the earlier
// requests that count under reading: all of them, or the admitted ones.
func refusedByBruteForce(ats, costs []int64, calls, tokens rule.Rule, reading rule.Refusals) []bool {
	refused := make([]bool, len(ats))
	for i, t := range ats {
		var n, sum int64
		for j := range i {
			if reading == rule.RefusedFree && refused[j] {
				continue
			}
			if t-ats[j] < int64(calls.Window) {
				n++
			}
			if t-ats[j] < int64(tokens.Window) {
				sum += costs[j]
			}
		}
		refused[i] = n >= int64(calls.Limit) || sum+costs[i] > int64(tokens.Limit)
	}
	return refused
}

// TestRefusedReadingAgrees: under either reading of refused requests,
// serve refuses exactly the requests a brute-force count refuses, and its
// live verdict is check's on its log read by the status column under the
// same reading (--status-col status --refused count|free).
func TestRefusedReadingAgrees(t *testing.T) {
	rules := mustRules(t, "3/1s, 40 tokens/2s")
	for _, reading := range []rule.Refusals{rule.RefusedCount, rule.RefusedFree} {
		t.Run(reading.Word(), func(t *testing.T) {
			c := newClocked(t, Options{Rules: rules, Provider: OpenAI, Refusals: reading})
			rng := rand.New(rand.NewPCG(7, uint64(reading)))
			var ats, costs []int64
			var got []bool
			at := ms(1000)
			for range 400 {
				at += rng.Int64N(ms(700))
				max := 1 + rng.IntN(12)
				rec := c.do(t, at, chatBody("hello world!", max, ""))
				require.Contains(t, []int{200, 429}, rec.Code, rec.Body.String())
				ats, costs, got = append(ats, at), append(costs, 3+int64(max)), append(got, rec.Code == 429)
			}
			want := refusedByBruteForce(ats, costs, rules[0], rules[1], reading)
			assert.Equal(t, want, got, "serve's 429s are the brute force's refusals")
			refused := int64(0)
			for _, r := range got {
				if r {
					refused++
				}
			}
			require.Greater(t, refused, int64(40), "the stream tries the contract")
			live := c.s.Violations()
			c.judge(t)
			read := LogReadOptionsFor(rules, false)
			read.StatusCol = "status"
			res, err := logcheck.Run([]logcheck.Input{{Name: "log", R: bytes.NewReader(c.log.Bytes())}},
				logcheck.Config{Rules: rules, Read: read, Refusals: reading})
			require.NoError(t, err)
			require.NotNil(t, res.Statuses)
			assert.Equal(t, refused, res.Statuses.Refused)
			assert.EqualValues(t, 0, res.Violations(), "no admitted request broke the contract")
			if reading == rule.RefusedCount {
				assert.EqualValues(t, 0, res.Statuses.Unexplained, "every 429 is a refusal the rules explain")
				explained := int64(0)
				for _, r := range res.Groups[0].Report.Rules {
					explained += r.Explained
				}
				assert.Equal(t, explained, live, "counted, each 429 breaks the rules check says refuse it")
			} else {
				assert.EqualValues(t, 0, live, "free, a 429 is a refusal that took nothing")
			}
		})
	}
}

package difftest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
	"github.com/rlcheck/rlcheck/workload"
)

// presetRequest is one request to serve's OpenAI preset: its arrival, the
// instant its answer is let go, its prompt's characters and max_tokens.
type presetRequest struct {
	at, answer int64
	chars, max int
}

// settleRegimes are the completion sizes (Options.CompletionPermille) a
// case's answers report: half of max_tokens (A < E), all of it (A = E),
// twice it (A > E), and a thousandth of it with no prompt (A = 0).
var settleRegimes = []struct {
	name     string
	permille int
	prompt   bool
}{{"A<E", 500, true}, {"A=E", 0, true}, {"A>E", 2000, true}, {"A=0", 1, false}}

// drawPresetCase draws rules of any kind over tokens, sometimes beside a
// call rule, and requests whose answers come at their own arrival, at a
// later arrival's instant (a tie), exactly W on, or anywhere within 2W.
func drawPresetCase(rng *rand.Rand, prompt bool) ([]rule.Rule, rule.Boundary, []presetRequest) {
	w := int64(time.Second)
	n := 60 + rng.IntN(100)
	rules := []rule.Rule{tokenRule(rng, n, time.Duration(w))}
	if rng.IntN(2) == 0 {
		rules = append([]rule.Rule{{Limit: 2 + rng.IntN(6), Window: time.Duration(w)}}, rules...)
	}
	b := rule.HalfOpen
	if rng.IntN(3) == 0 {
		b = rule.Closed
	}
	reqs := make([]presetRequest, 8+rng.IntN(16))
	t := int64(1_900_000_000) * w
	for i := range reqs {
		t += rng.Int64N(w / 3)
		r := presetRequest{at: t, max: rng.IntN(n / 3)}
		if prompt {
			r.chars = rng.IntN(40)
		}
		reqs[i] = r
	}
	for i := range reqs {
		r := &reqs[i]
		switch rng.IntN(4) {
		case 0:
			r.answer = r.at
		case 1:
			r.answer = max(r.at, reqs[min(len(reqs)-1, i+1+rng.IntN(3))].at)
		case 2:
			r.answer = r.at + w
		default:
			r.answer = r.at + rng.Int64N(2*w)
		}
	}
	return rules, b, reqs
}

// presetRun drives a serve.Server of the OpenAI preset on a virtual clock:
// each request arrives at its instant and waits out a latency that only
// its answer's instant ends, so that answers interleave with arrivals.
type presetRun struct {
	mu  sync.Mutex
	now int64
}

func (p *presetRun) clock() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.now
}

func (p *presetRun) set(t int64) {
	p.mu.Lock()
	p.now = t
	p.mu.Unlock()
}

// run sends the requests and returns each one's status, the log, and the
// server's live violations.
func (p *presetRun) run(t *testing.T, rules []rule.Rule, b rule.Boundary, reading rule.Refusals, permille int, reqs []presetRequest) ([]int, []byte, int64) {
	var log bytes.Buffer
	s, err := serve.New(serve.Options{Rules: rules, Boundary: b, Log: &log, Now: p.clock, Provider: serve.OpenAI, Refusals: reading,
		CompletionPermille: permille, Latency: workload.Dist{Kind: workload.Fixed, A: time.Hour}})
	require.NoError(t, err)
	type event struct {
		at     int64
		i      int
		answer bool
	}
	var events []event
	for i, r := range reqs {
		events = append(events, event{r.at, i, false}, event{r.answer, i, true})
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	codes := make([]int, len(reqs))
	cancels := make([]context.CancelFunc, len(reqs))
	dones := make([]chan struct{}, len(reqs))
	for _, e := range events {
		p.set(e.at)
		if e.answer {
			cancels[e.i]()
			<-dones[e.i]
			continue
		}
		r := reqs[e.i]
		body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}],"max_tokens":%d}`, strings.Repeat("a", r.chars), r.max)
		ctx, cancel := context.WithCancel(context.Background())
		cancels[e.i], dones[e.i] = cancel, make(chan struct{})
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)).WithContext(ctx)
		before, _ := s.Requests()
		go func() {
			defer close(dones[e.i])
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			codes[e.i] = rec.Code
		}()
		for judged, _ := s.Requests(); judged == before; judged, _ = s.Requests() {
			time.Sleep(50 * time.Microsecond) // until the arrival is stamped and judged
		}
	}
	v := s.Violations()
	require.NoError(t, s.Close())
	return codes, log.Bytes(), v
}

// loggedCase is the case serve's log records: each request at its stamp,
// its estimate, and its usage from its settlement's stamp when settled.
func loggedCase(t *testing.T, rules []rule.Rule, b rule.Boundary, log []byte) Case {
	rows, err := csv.NewReader(bytes.NewReader(log)).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "log cell %q", s)
		return v
	}
	c := Case{Rules: rules, Boundary: b}
	for _, row := range rows[1:] {
		s := Send{At: num(row[0]), Costs: map[string]int64{"tokens": num(row[col["tokens"]])}}
		if cell := row[col[serve.SettledColumn]]; cell != "" {
			u := num(cell)
			s.Settled, s.Actual = &u, map[string]int64{"tokens": num(row[col[serve.ActualColumn("tokens")]])}
		}
		c.Sends = append(c.Sends, s)
	}
	return c
}

// refusedFree is the oracle's answer to each request under
// rule.RefusedFree: a request breaks the contract when the oracle, judging
// it after the requests admitted before it (each settled where the log
// says), finds it violating; a refused one is then forgotten.
func refusedFree(c Case) []int {
	rules := OracleRules(c.Rules)
	var admitted []oracle.Send
	codes := make([]int, len(c.Sends))
	for i, s := range c.Sends {
		cand := append(slices.Clone(admitted), oracle.Send{T: s.At, Costs: s.Costs})
		codes[i] = http.StatusOK
		for _, v := range oracle.JudgeAll(cand, rules, c.Boundary == rule.Closed) {
			if slices.Contains(v.Violations, len(admitted)) {
				codes[i] = http.StatusTooManyRequests
			}
		}
		if codes[i] == http.StatusOK {
			admitted = append(admitted, oracle.Send{T: s.At, Costs: s.Costs, Settled: s.Settled, Actual: s.Actual})
		}
	}
	return codes
}

// TestServePresetSettlesAsTheOracle: serve's OpenAI preset charges each
// request its estimate at arrival and settles it to the usage its answer
// reports, at the answer's instant, while later requests arrive (answers
// at their own arrival, tied with a later one, W on). Under both readings
// of refused requests it answers 429 exactly the requests the oracle finds
// violating, judged on what its log records (every 200 settled, every 429
// never); its live count is the oracle's, and so is check's verdict on its
// log read as the command reads it (LogCheckConfig: --actual
// tokens=tokens_actual --settled-col settled_ns), for every kind and both
// boundaries.
func TestServePresetSettlesAsTheOracle(t *testing.T) {
	seen := map[string]int{}
	for _, reading := range []rule.Refusals{rule.RefusedCount, rule.RefusedFree} {
		for _, g := range settleRegimes {
			rng := rand.New(rand.NewPCG(uint64(g.permille), 0x73657276))
			for seed := range testrun.Seeds(8, 100) {
				what := fmt.Sprintf("%s %s seed %d", reading.Word(), g.name, seed)
				presetAgrees(t, what, reading, g.permille, g.prompt, rng, seen)
			}
		}
	}
	for _, k := range []string{"A<E", "A>E", "A=0", "429"} {
		assert.Positive(t, seen[k], "no case of %s", k)
	}
}

// presetAgrees runs one drawn case through serve under reading and
// compares its answers, its live count and check's verdict on its log
// with the oracle's, counting what it saw in seen.
func presetAgrees(t *testing.T, what string, reading rule.Refusals, permille int, prompt bool, rng *rand.Rand, seen map[string]int) {
	rules, b, reqs := drawPresetCase(rng, prompt)
	codes, log, live := new(presetRun).run(t, rules, b, reading, permille, reqs)
	c := loggedCase(t, rules, b, log)
	what = fmt.Sprintf("%s: %v %s", what, rules, b)
	require.Len(t, c.Sends, len(reqs), what)
	wantCodes := refusedFree(c)
	want, _ := expectStatuses(c, codes, reading)
	if reading == rule.RefusedCount {
		want = Expect(c)
		broken := map[int64]bool{}
		for _, v := range want[""] {
			for _, l := range v.Lines {
				broken[l] = true
			}
		}
		for i := range wantCodes {
			wantCodes[i] = map[bool]int{true: http.StatusTooManyRequests, false: http.StatusOK}[broken[int64(i)+2]]
		}
	}
	require.Equal(t, wantCodes, codes, what)
	var total int64
	for _, v := range want[""] {
		total += int64(len(v.Lines))
	}
	for i, s := range c.Sends {
		require.Equal(t, codes[i] == http.StatusOK, s.Settled != nil, "%s: request %d settled iff answered 200", what, i)
		if s.Settled != nil && s.Actual["tokens"] != s.Costs["tokens"] {
			seen[map[bool]string{true: "A<E", false: "A>E"}[s.Actual["tokens"] < s.Costs["tokens"]]]++
		}
		if s.Settled != nil && s.Actual["tokens"] == 0 && s.Costs["tokens"] > 0 {
			seen["A=0"]++
		}
		if codes[i] == http.StatusTooManyRequests {
			seen["429"]++
		}
	}
	assert.Equal(t, total, live, "%s: live violations", what)
	read, refusals := serve.LogCheckConfig(serve.Options{Rules: rules, Provider: serve.OpenAI, Refusals: reading}, false)
	res, err := logcheck.Run([]logcheck.Input{{Name: "log", R: bytes.NewReader(log)}},
		logcheck.Config{Rules: rules, Boundary: b, List: len(reqs) + 1, Read: read, Refusals: refusals})
	require.NoError(t, err, what)
	require.Equal(t, want, FromResult(res), "%s: check on serve's log", what)
}

package difftest

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

// served is what a serve.Server made of a case's requests: each request's
// status, the log it wrote, and its live counts.
type served struct {
	codes                  []int
	log                    []byte
	violations             int64
	judged, violatingCalls int64
}

// runServe sends the case's sends to a serve.Server as requests, on a
// virtual clock set to each send's instant, costs and key in headers.
func runServe(t *testing.T, c Case) served {
	t.Helper()
	var at int64
	var log bytes.Buffer
	opt := serve.Options{Rules: c.Rules, Boundary: c.Boundary, Log: &log, Now: func() int64 { return at }}
	if c.Keyed {
		opt.KeyHeader = "X-Key"
	}
	for _, u := range c.Units() {
		opt.Costs = append(opt.Costs, serve.CostSource{Unit: u, Header: "X-Cost-" + u})
	}
	s, err := serve.New(opt)
	require.NoError(t, err)
	var out served
	for _, send := range c.Sends {
		at = send.At
		req := httptest.NewRequest("POST", "/", nil)
		if c.Keyed {
			req.Header.Set("X-Key", send.Key)
		}
		for _, u := range c.Units() {
			req.Header.Set("X-Cost-"+u, strconv.FormatInt(send.Costs[u], 10))
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		out.codes = append(out.codes, rec.Code)
	}
	out.violations = s.Violations()
	out.judged, out.violatingCalls = s.Requests()
	require.NoError(t, s.Close())
	out.log = log.Bytes()
	return out
}

// tooCostly reports whether a send costs more than some rule could ever
// admit (its limit, a bucket's burst): serve answers it 413 unjudged.
func tooCostly(c Case, s Send) bool {
	for _, r := range c.Rules {
		most := int64(r.Limit)
		if r.Kind == rule.Bucket {
			most = int64(r.Burst)
		}
		if r.Unit != "" && s.Costs[r.Unit] > most {
			return true
		}
	}
	return false
}

// judgedCase is the case serve judged: the sends it did not answer 413,
// at the instants its log stamped them with (a tie moves 1 ns past the
// last stamp, an answer takes one too), in its log's order.
func judgedCase(t *testing.T, c Case, log []byte) (Case, []int) {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(log)).ReadAll()
	require.NoError(t, err)
	j := c
	j.Sends = nil
	var idx []int
	for i, s := range c.Sends {
		if !tooCostly(c, s) {
			idx = append(idx, i)
		}
	}
	require.Len(t, rows, len(idx)+1, "a row for every request judged: %s", c)
	for r, row := range rows[1:] {
		s := c.Sends[idx[r]]
		at, err := strconv.ParseInt(row[0], 10, 64)
		require.NoError(t, err)
		require.Equal(t, s.Key, row[1])
		j.Sends = append(j.Sends, Send{At: at, Key: s.Key, Costs: s.Costs})
	}
	return j, idx
}

// TestServeMatchesOracle: serve, driven on a virtual clock, answers 413
// (unjudged, unlogged) exactly the requests that cost more than a rule
// could ever admit, 429 exactly those the oracle finds violating among
// the requests it judged at the instants it stamped, and 200 the rest;
// its live count is the oracle's, and so is check's verdict on its log.
func TestServeMatchesOracle(t *testing.T) {
	for _, f := range Families {
		t.Run(f.String(), func(t *testing.T) {
			seen := map[int]int{}
			for i, c := range draws(f, testrun.Seeds(6, 150), 3) {
				if !serveAgrees(t, c, i, seen) {
					return
				}
			}
			assert.Positive(t, seen[http.StatusRequestEntityTooLarge], "some request cost more than a rule admits")
			assert.Positive(t, seen[http.StatusTooManyRequests], "some request broke a rule")
		})
	}
}

// serveAgrees runs one case through serve and compares, counting the
// answers in seen; false on a disagreement.
func serveAgrees(t *testing.T, c Case, seed int, seen map[int]int) bool {
	out := runServe(t, c)
	for _, code := range out.codes {
		seen[code]++
	}
	j, idx := judgedCase(t, c, out.log)
	want := Expect(j)
	broken := map[int]bool{}
	var total int64
	for _, vs := range want {
		for _, v := range vs {
			total += int64(len(v.Lines))
			for _, l := range v.Lines {
				broken[idx[l-2]] = true
			}
		}
	}
	wantCodes := make([]int, len(c.Sends))
	for i, s := range c.Sends {
		wantCodes[i] = map[bool]int{true: http.StatusTooManyRequests, false: http.StatusOK}[broken[i]]
		if tooCostly(c, s) {
			wantCodes[i] = http.StatusRequestEntityTooLarge
		}
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "log", R: bytes.NewReader(out.log)}},
		logcheck.Config{Rules: c.Rules, Boundary: c.Boundary, List: len(c.Sends) + 1, Read: serve.LogReadOptionsFor(c.Rules, c.Keyed)})
	require.NoError(t, err)
	return assert.Equal(t, wantCodes, out.codes, "seed %d: %s", seed, c) &&
		assert.Equal(t, total, out.violations, "seed %d: live violations", seed) &&
		assert.Equal(t, [2]int64{int64(len(idx)), int64(len(broken))}, [2]int64{out.judged, out.violatingCalls}, "seed %d", seed) &&
		assert.Equal(t, want, FromResult(res), "seed %d: check on serve's log", seed)
}

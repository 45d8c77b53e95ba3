package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// clocked is a Server on a clock the test sets, with its log in memory.
type clocked struct {
	s   *Server
	at  int64
	log *bytes.Buffer
	opt Options
}

func newClocked(t *testing.T, opt Options) *clocked {
	t.Helper()
	c := &clocked{log: &bytes.Buffer{}}
	opt.Log = c.log
	c.opt = opt
	s, err := New(opt)
	require.NoError(t, err)
	s.now = func() int64 { return c.at }
	c.s = s
	return c
}

// do sends one request at instant at (epoch ns), with its headers and an
// optional body.
func (c *clocked) do(t *testing.T, at int64, body string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	c.at = at
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest("POST", "/", rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header[http.CanonicalHeaderKey(hdr[i])] = []string{hdr[i+1]}
	}
	rec := httptest.NewRecorder()
	c.s.ServeHTTP(rec, req)
	return rec
}

// judge closes the server and checks its log as rlcheck serve does; the
// verdict must equal the one judged live.
func (c *clocked) judge(t *testing.T) *report.Result {
	t.Helper()
	require.NoError(t, c.s.Close())
	res, err := judgeLog("log", bytes.NewReader(c.log.Bytes()), false, c.opt)
	require.NoError(t, err)
	assert.Equal(t, c.s.Violations(), res.Violations(), "the live verdict is check's on the log")
	return res
}

func ms(n int64) int64 { return n * int64(time.Millisecond) }

func mustRules(t *testing.T, s string) []rule.Rule {
	t.Helper()
	rs, err := rule.ParseList(s)
	require.NoError(t, err)
	return rs
}

func statuses(recs []*httptest.ResponseRecorder) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.Code)
	}
	return out
}

func TestFixedWindowAdmitsAcrossItsEdge(t *testing.T) {
	at := []int64{900, 950, 990, 1000, 1050, 1100}
	run := func(rules string) ([]*httptest.ResponseRecorder, *report.Result) {
		c := newClocked(t, Options{Rules: mustRules(t, rules)})
		var recs []*httptest.ResponseRecorder
		for _, a := range at {
			recs = append(recs, c.do(t, ms(a), ""))
		}
		return recs, c.judge(t)
	}
	recs, res := run("3/1s fixed")
	assert.Equal(t, []int{200, 200, 200, 200, 200, 200}, statuses(recs), "three in [0, 1s), three in [1s, 2s)")
	assert.Zero(t, res.Violations())
	assert.Equal(t, `"3-per-1s-fixed";q=3;w=1`, recs[0].Header().Get("RateLimit-Policy"))

	recs, res = run("3/1s")
	assert.Equal(t, []int{200, 200, 200, 429, 429, 429}, statuses(recs), "sliding: six within one second")
	assert.EqualValues(t, 3, res.Violations())

	c := newClocked(t, Options{Rules: mustRules(t, "3/1s fixed")})
	for _, a := range []int64{1000, 1100, 1200} {
		require.Equal(t, 200, c.do(t, ms(a), "").Code)
	}
	rec := c.do(t, ms(1300), "")
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "1", rec.Header().Get("Retry-After"), "the window resets at 2 s, 0.7 s on: 1 s rounded up")
	assert.Equal(t, `"3-per-1s-fixed";r=0;t=1`, rec.Header().Get("RateLimit"))
	assert.Equal(t, 200, c.do(t, ms(2000), "").Code, "admitted at the reset instant Retry-After names")
	c.judge(t)
}

// TestFixedWindowAnnouncesItsReset: every answer lists a fixed window
// with what remains of it and the seconds to its reset, and so a first-call
// window; a violator still counts in the window.
func TestFixedWindowAnnouncesItsReset(t *testing.T) {
	c := newClocked(t, Options{Rules: mustRules(t, "3/10s fixed, 2/1s first-call")})
	var got []string
	for _, a := range []int64{10_000, 12_500, 12_600, 17_000, 19_999, 20_000} {
		got = append(got, c.do(t, ms(a), "").Header().Get("RateLimit"))
	}
	assert.Equal(t, []string{
		`"3-per-10s-fixed";r=2;t=10, "2-per-1s-first-call";r=1;t=1`,
		`"3-per-10s-fixed";r=1;t=8, "2-per-1s-first-call";r=1;t=1`,
		`"3-per-10s-fixed";r=0;t=8, "2-per-1s-first-call";r=0;t=1`,
		`"3-per-10s-fixed";r=0;t=3, "2-per-1s-first-call";r=1;t=1`,
		`"3-per-10s-fixed";r=0;t=1, "2-per-1s-first-call";r=1;t=1`,
		`"3-per-10s-fixed";r=2;t=10, "2-per-1s-first-call";r=0;t=1`,
	}, got)
	c.judge(t)
}

func TestBucketRefillsContinuously(t *testing.T) {
	// Serve stamps no two requests alike: four "at once" are a ns apart.
	base := int64(10 * time.Second)
	for _, tc := range []struct {
		last int64
		want int
	}{{400, http.StatusTooManyRequests}, {500, http.StatusOK}} {
		c := newClocked(t, Options{Rules: mustRules(t, "2/1s burst 4")})
		for range 4 {
			require.Equal(t, 200, c.do(t, base, "").Code)
		}
		rec := c.do(t, base+ms(tc.last), "")
		assert.Equal(t, tc.want, rec.Code, "%d ms on, the bucket holds %d/500 of a unit", tc.last, tc.last)
		assert.Equal(t, `"2-per-1s-burst-4";q=4;w=1;refill=2`, rec.Header().Get("RateLimit-Policy"))
		res := c.judge(t)
		if tc.want == http.StatusOK {
			assert.Zero(t, res.Violations())
			continue
		}
		assert.EqualValues(t, 1, res.Violations())
		assert.Equal(t, "1", rec.Header().Get("Retry-After"), "0.2 units more take 0.1 s")
		var body rejection
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		require.Len(t, body.Violations, 1)
		assert.Equal(t, "0.8", body.Violations[0].Level)
		assert.Equal(t, "bucket", body.Violations[0].Kind)
	}
}

func TestFirstCallWindowOpensAtTheFirstCall(t *testing.T) {
	c := newClocked(t, Options{Rules: mustRules(t, "2/1s first-call")})
	var recs []*httptest.ResponseRecorder
	for _, a := range []int64{300, 900, 1200, 1300, 1400} {
		recs = append(recs, c.do(t, ms(a), ""))
	}
	assert.Equal(t, []int{200, 200, 429, 200, 200}, statuses(recs), "the window [0.3 s, 1.3 s), then [1.3 s, 2.3 s)")
	assert.Equal(t, `"2-per-1s-first-call";r=0;t=1`, recs[2].Header().Get("RateLimit"))
	assert.EqualValues(t, 1, c.judge(t).Violations())
}

// TestFirstCallOversizeOpensNoWindow: a request whose cost alone breaks a
// first-call rule opens no window, refused (413) or recorded: the window
// opens at the next request.
func TestFirstCallOversizeOpensNoWindow(t *testing.T) {
	for _, record := range []bool{false, true} {
		c := newClocked(t, Options{
			Rules:  mustRules(t, "9 tokens/1500ms first-call"),
			Costs:  []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
			Record: record,
		})
		var recs []*httptest.ResponseRecorder
		for i, tok := range []string{"10", "1", "1"} {
			recs = append(recs, c.do(t, ms(int64(100*i))+1, "", "X-Tokens", tok))
		}
		want, viol := []int{413, 200, 200}, int64(0)
		if record {
			want, viol = []int{200, 200, 200}, 1
		}
		assert.Equal(t, want, statuses(recs), "record %v", record)
		assert.Equal(t, `"9-tokens-per-1.5s-first-call";r=7;t=2`, recs[2].Header().Get("RateLimit"), "the window [0.1 s, 1.6 s)")
		assert.Equal(t, viol, c.judge(t).Violations(), "record %v", record)
	}
}

package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCostHeaderMetersTokens(t *testing.T) {
	c := newClocked(t, Options{
		Rules: mustRules(t, "5/1s, 100 tokens/1s"),
		Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
	})
	var recs []*httptest.ResponseRecorder
	for i, tok := range []string{"60", "30", "20", "0", "10"} {
		recs = append(recs, c.do(t, ms(int64(100*(i+1))), "", "X-Tokens", tok))
	}
	assert.Equal(t, []int{200, 200, 429, 429, 429}, statuses(recs),
		"60+30+20 overfills 100, and the refused 20 stays in the window (check counts every logged send): even a cost of 0 finds it overfull")
	assert.Equal(t, `"5-per-1s";q=5;w=1, "100-tokens-per-1s";q=100;w=1;qu="tokens"`, recs[0].Header().Get("RateLimit-Policy"))
	assert.Equal(t, `"5-per-1s";r=2, "100-tokens-per-1s";r=0;t=1`, recs[2].Header().Get("RateLimit"))
	var body rejection
	require.NoError(t, json.Unmarshal(recs[2].Body.Bytes(), &body))
	require.Len(t, body.Violations, 1)
	assert.Equal(t, "tokens", body.Violations[0].Unit)
	assert.EqualValues(t, 20, body.Violations[0].Cost)
	assert.EqualValues(t, 110, body.Violations[0].Units)

	res := c.judge(t)
	assert.EqualValues(t, []int64{0, 3}, []int64{res.Totals[0].Violations, res.Totals[1].Violations})
	lines := strings.Split(strings.TrimSpace(c.log.String()), "\n")
	assert.Equal(t, LogHeader+",tokens", lines[0])
	assert.True(t, strings.HasSuffix(lines[3], ",20"), lines[3])
}

func TestCostOverTheLimitIsRefusedForGood(t *testing.T) {
	c := newClocked(t, Options{
		Rules: mustRules(t, "5/1s, 50 tokens/1s burst 80"),
		Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
	})
	rec := c.do(t, ms(1), "", "X-Tokens", "90")
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "90 tokens exceed the burst of 80: no wait admits them")
	assert.Contains(t, rec.Body.String(), "request cost exceeds a rule's limit")
	assert.Contains(t, rec.Body.String(), "90 tokens against 50 tokens/1s burst 80")
	assert.Empty(t, rec.Header().Get("Retry-After"))
	assert.Equal(t, 200, c.do(t, ms(2), "", "X-Tokens", "80").Code)
	assert.Zero(t, c.judge(t).Violations(), "the 90 was never admitted: neither judged nor logged")
	assert.Equal(t, 2, strings.Count(c.log.String(), "\n"), "the header and the 80")
}

// TestOversizeTakesNothing: a request whose cost alone exceeds a rule is
// answered 413 and takes nothing from any window, a call rule's included:
// the answers after it are those it would have had without it.
func TestOversizeTakesNothing(t *testing.T) {
	c := newClocked(t, Options{
		Rules: mustRules(t, "2/1s, 10 tokens/1s"),
		Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
	})
	var recs []*httptest.ResponseRecorder
	for i, tok := range []string{"11", "5", "5"} {
		recs = append(recs, c.do(t, ms(int64(100*(i+1))), "", "X-Tokens", tok))
	}
	assert.Equal(t, []int{413, 200, 200}, statuses(recs))
	assert.Zero(t, c.judge(t).Violations())
	judged, _ := c.s.Requests()
	assert.EqualValues(t, 2, judged)
	assert.EqualValues(t, 1, c.s.unjudged.Load())
}

// TestSumPastInt64IsNeverAdmitted: a request whose cost would carry a
// window's sum past int64 cannot be judged; it is refused unjudged, the
// requests after it are judged on, and the log's verdict stays readable.
func TestSumPastInt64IsNeverAdmitted(t *testing.T) {
	c := newClocked(t, Options{
		Rules:  mustRules(t, "1000 tokens/1s"),
		Costs:  []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
		Record: true, // every request is admitted, and judged
	})
	var recs []*httptest.ResponseRecorder
	big := strconv.FormatInt(MaxCost, 10)
	for i := range 11 {
		recs = append(recs, c.do(t, ms(int64(10*(i+1))), "", "X-Tokens", big))
	}
	recs = append(recs, c.do(t, ms(2000), "", "X-Tokens", big))
	want := []int{200, 200, 200, 200, 200, 200, 200, 200, 200, 413, 413, 200}
	assert.Equal(t, want, statuses(recs), "recorded: nine fit in int64, the tenth and eleventh cannot be judged, the window then passes")
	assert.Contains(t, recs[9].Body.String(), "cannot be judged")
	res := c.judge(t)
	assert.EqualValues(t, 10, res.Violations(), "every recorded request breaks 1000 tokens/1s")
	assert.EqualValues(t, 2, c.s.unjudged.Load())
	assert.Equal(t, http.StatusBadRequest, c.do(t, ms(3000), "", "X-Tokens", big+"0").Code, "more than check reads back from the log")
}

func TestBadCostIsABadRequest(t *testing.T) {
	c := newClocked(t, Options{
		Rules: mustRules(t, "100 tokens/1s"),
		Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
	})
	for _, v := range []string{"", "-1", "1.5", "1e3", "ten", strings.Repeat("9", 4096)} {
		hdr := []string{"X-Tokens", v}
		if v == "" {
			hdr = nil
		}
		rec := c.do(t, ms(1), "", hdr...)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%.20q", v)
		assert.Contains(t, rec.Body.String(), "X-Tokens", "%.20q", v)
		assert.Less(t, rec.Body.Len(), 400, "the answer quotes a bounded part of the value")
	}
	require.NoError(t, c.s.Close())
	judged, _ := c.s.Requests()
	assert.Zero(t, judged, "an unreadable cost is not judged")
	assert.Equal(t, LogHeader+",tokens\n", c.log.String(), "nor logged")
}

// TestMissingCostHeaderIsSaidMissing: a request without its cost header
// is told the header is missing; "got 0" read as a cost of 0.
func TestMissingCostHeaderIsSaidMissing(t *testing.T) {
	c := newClocked(t, Options{
		Rules: mustRules(t, "100 tokens/1s"),
		Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
	})
	rec := c.do(t, ms(1), "")
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), `header X-Tokens: missing, want the tokens cost`)
	rec = c.do(t, ms(2), "", "X-Tokens", "1")
	assert.Equal(t, http.StatusOK, rec.Code)
	req := httptest.NewRequest("POST", "/", nil)
	req.Header["X-Tokens"] = []string{"1", "2"}
	rec = httptest.NewRecorder()
	c.s.ServeHTTP(rec, req)
	assert.Contains(t, rec.Body.String(), `header X-Tokens: 2 values, want one, the tokens cost`)
}

func TestBodyCostIsReadAndForwardedIntact(t *testing.T) {
	var mu sync.Mutex
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, string(b))
		mu.Unlock()
	}))
	defer up.Close()
	u, err := url.Parse(up.URL)
	require.NoError(t, err)
	c := newClocked(t, Options{
		Rules:    mustRules(t, "100 tokens/1s, 10 input/1s"),
		Costs:    []CostSource{{Unit: "tokens", Field: "max_tokens"}, {Unit: "input", Field: "usage.input"}},
		Upstream: u,
	})
	ok := `{"model":"m","max_tokens":70,"usage":{"input":4}}`
	assert.Equal(t, 200, c.do(t, ms(1), ok).Code)
	rec := c.do(t, ms(2), `{"max_tokens":40,"usage":{"input":1}}`)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	for _, bad := range []string{
		`{"max_tokens":40}`, `{"max_tokens":"40","usage":{"input":1}}`, `{"max_tokens":4.5,"usage":{"input":1}}`,
		`[1]`, `{"max_tokens":`, ``, `null`,
	} {
		rec := c.do(t, ms(3), bad)
		assert.Equal(t, http.StatusBadRequest, rec.Code, bad)
	}
	big := `{"max_tokens":1,"usage":{"input":1},"pad":"` + strings.Repeat("x", MaxCostBody) + `"}`
	assert.Equal(t, http.StatusRequestEntityTooLarge, c.do(t, ms(4), big).Code)
	res := c.judge(t)
	assert.EqualValues(t, 2, res.Sends)
	assert.Equal(t, []string{ok}, got, "the upstream gets the body whole")
	assert.Contains(t, c.log.String(), LogHeader+",tokens,input,"+strings.Join(AnswerColumns(), ",")+"\n")
}

func TestCostSourcesMustCoverTheUnits(t *testing.T) {
	_, err := New(Options{Rules: mustRules(t, "100 tokens/1s")})
	assert.ErrorContains(t, err, "the rules meter tokens")
	_, err = New(Options{Rules: mustRules(t, "100 tokens/1s"), Costs: []CostSource{{Unit: "points", Header: "X-Points"}}})
	assert.ErrorContains(t, err, "no rule meters it")
	_, err = New(Options{Rules: mustRules(t, "100 status/1s"), Costs: []CostSource{{Unit: "status", Header: "X-S"}}})
	assert.ErrorContains(t, err, "a column of that name")
}

// endless is a body that never ends, counting what is read of it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestHostileCostsAreBounded(t *testing.T) {
	opt := Options{
		Rules: mustRules(t, "5/1s, 100 tokens/1s fixed"),
		Costs: []CostSource{{Unit: "tokens", Field: "a.b"}},
	}
	s, err := New(opt)
	require.NoError(t, err)
	body := &endless{}
	req := httptest.NewRequest("POST", "/", body)
	rec := serveRecorded(t, s, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.LessOrEqual(t, body.n, int64(2*MaxCostBody), "an endless body is read no further than the bound")

	r := start(t, opt)
	c := &http.Client{Timeout: hangGuard}
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	for _, b := range []string{deep, `{"a":{"b":1e999999}}`, `{"a":{"b":18446744073709551616}}`, `{"a":{"b":-0.0}}`, "\xff\xfe", `{"a":[1]}`} {
		resp, err := c.Post(r.url+"/", "application/json", strings.NewReader(b))
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%.30q", b)
	}
	for _, tok := range []int{60, 30, 20} {
		resp, err := c.Post(r.url+"/", "application/json", strings.NewReader(`{"a":{"b":`+strconv.Itoa(tok)+`}}`))
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	res := r.finish(t) // Run fails unless the live verdict is check's on the log
	assert.EqualValues(t, 3, res.Sends, "the unreadable ones are not judged")
	assert.EqualValues(t, 1, res.Violations())
}

func serveRecorded(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		require.FailNow(t, "the server hangs on an endless body")
	}
	return rec
}

// TestRetryAfterIsTheEarliestAdmission: a request refused by a sliding
// cost rule is told to wait until enough tokens leave the window, not a
// whole window; at that instant the same request is admitted, a moment
// before it is not. The refused request counts in the window meanwhile.
func TestRetryAfterIsTheEarliestAdmission(t *testing.T) {
	for _, tc := range []struct {
		retry int64
		want  int
	}{{ms(10900), 429}, {ms(11500), 200}} {
		c := newClocked(t, Options{
			Rules: mustRules(t, "100 tokens/10s"),
			Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}},
		})
		require.Equal(t, 200, c.do(t, ms(1000), "", "X-Tokens", "60").Code)
		require.Equal(t, 200, c.do(t, ms(6000), "", "X-Tokens", "30").Code)
		rec := c.do(t, ms(6500), "", "X-Tokens", "20")
		require.Equal(t, 429, rec.Code)
		assert.Equal(t, "5", rec.Header().Get("Retry-After"), "the 60 leaves at 11 s, 4.5 s on: not the whole 10 s window")
		assert.Contains(t, rec.Header().Get("RateLimit"), `"100-tokens-per-10s";r=0;t=5`)
		assert.Equal(t, tc.want, c.do(t, tc.retry, "", "X-Tokens", "20").Code, "the retry at %d ms", tc.retry/ms(1))
	}
}

// TestRetryAfterWaitsForEveryRule: a request refused by one rule that took
// the last slot of another waits for both, since it counts in both.
func TestRetryAfterWaitsForEveryRule(t *testing.T) {
	for _, tc := range []struct {
		retry int64
		want  int
	}{{ms(10999), 429}, {ms(11000), 200}} {
		c := newClocked(t, Options{Rules: mustRules(t, "1/1s, 3/10s")})
		for _, at := range []int64{1000, 3000} {
			require.Equal(t, 200, c.do(t, ms(at), "").Code)
		}
		rec := c.do(t, ms(3500), "")
		require.Equal(t, 429, rec.Code, "broke 1/1s, took the last of 3/10s")
		assert.Equal(t, "8", rec.Header().Get("Retry-After"), "3/10s frees a slot at 11 s, 7.5 s on")
		assert.Equal(t, tc.want, c.do(t, tc.retry, "").Code, "the retry at %d ms", tc.retry/ms(1))
	}
}

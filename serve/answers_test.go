package serve

import (
	"bytes"
	"encoding/csv"
	"flag"
	"github.com/rlcheck/rlcheck/rlheader"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

var updateLog = flag.Bool("update", false, "write the request log docs/serve.md infers to testdata/serve/upstream.csv")

// upstreamLog is the request log docs/serve.md infers: this test's.
const upstreamLog = "../testdata/serve/upstream.csv"

// TestProxyRecordsTheUpstreamsAnswers: behind serve, an upstream holding
// 7/1s and 40/10s answers 200 or 429 with its rate-limit headers; the log
// keeps each answer's status and headers (a hostile one cut to
// MaxHeaderText), check reads the log as before, and infer on it names
// the upstream's contract and the limits it announced. Serve and the
// upstream read one virtual clock, so both judge at the logged instants.
func TestProxyRecordsTheUpstreamsAnswers(t *testing.T) {
	hidden, err := rule.ParseList("7/1s,40/10s")
	require.NoError(t, err)
	provider := infertest.NewProvider(hidden, true)
	var now atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("RateLimit-Policy", "7;w=1, 40;w=10")
		h.Set("X-RateLimit-Limit", "7")
		if provider.Call(now.Load()) {
			h.Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	var log bytes.Buffer
	s, err := New(Options{MaxInFlight: 1000, Upstream: u, Log: &log})
	require.NoError(t, err)
	s.now = now.Load
	front := httptest.NewServer(s)
	defer front.Close()

	ms := infertest.Traffic(rand.New(rand.NewPCG(7, 40)), hidden[0], 1200)
	c := front.Client()
	sent, refused := 0, 0
	for i, m := range ms {
		if i > 0 && m == ms[i-1] {
			continue // one call an instant: serve's stamps are then the clock's
		}
		now.Store(m * int64(time.Millisecond))
		resp, _ := get(t, c, front.URL+"/")
		sent++
		if resp.StatusCode == http.StatusTooManyRequests {
			refused++
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		}
	}
	front.Close()
	require.NoError(t, s.Close())
	require.Positive(t, refused)

	if *updateLog {
		require.NoError(t, os.MkdirAll("../testdata/serve", 0o755))
		require.NoError(t, os.WriteFile(upstreamLog, log.Bytes(), 0o644))
	}
	shipped, err := os.ReadFile(upstreamLog)
	require.NoError(t, err)
	assert.Equal(t, string(shipped), log.String(), "the log docs/serve.md shows is serve's (-update writes it)")

	recs, err := csv.NewReader(bytes.NewReader(log.Bytes())).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, sent+1)
	assert.Equal(t, append(strings.Split(LogHeader, ","), AnswerColumns()...), recs[0])
	col := map[string]int{}
	for i, name := range recs[0] {
		col[name] = i
	}
	assert.Equal(t, "7;w=1, 40;w=10", recs[1][col["ratelimit_policy"]])

	res, err := judgeLog("requests.csv", bytes.NewReader(log.Bytes()), false, Options{MaxInFlight: 1000})
	require.NoError(t, err)
	assert.EqualValues(t, sent, res.Sends, "check reads the log as before")
	_, err = BothViews(bytes.NewReader(log.Bytes()), nil, rule.HalfOpen, false)
	require.NoError(t, err, "and so does the send view")

	open := func() (io.Reader, error) { return bytes.NewReader(log.Bytes()), nil }
	l, err := infer.Read("requests.csv", open, infer.ReadOptions{})
	require.NoError(t, err)
	rep := infer.Run("requests.csv", l, infer.Options{})
	k := rep.Keys[0]
	assert.Equal(t, refused, k.Refused)
	assert.Equal(t, "7/1s,40/10s", infer.RulesText(k.Fits[k.Best].Rules))
	require.NotNil(t, k.Headers)
	assert.Equal(t, sent, k.Headers.Answers)
	var announced []string
	for _, a := range k.Headers.Announced {
		announced = append(announced, strconv.FormatInt(a.N, 10)+"/"+a.Window.String()+" "+a.From.HTTP())
	}
	assert.Equal(t, []string{"7/1s RateLimit-Policy", "40/10s RateLimit-Policy", "7/0s X-RateLimit-Limit"}, announced)
	for _, p := range k.Headers.Past {
		assert.Zero(t, p.Accepted, "%s: the upstream keeps what it announces", p.Rule)
	}
}

// TestProxyCutsHostileHeaders: an upstream's header of any length takes
// at most MaxHeaderText bytes of the log, cut at a character boundary,
// its commas and quotes kept in one CSV field; infer counts it as
// malformed, not fatal.
func TestProxyCutsHostileHeaders(t *testing.T) {
	hostile := strings.Repeat(`a,"b"`, 1000) + "é"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Reset", hostile)
		w.Header().Add("Retry-After", "1")
		w.Header().Add("Retry-After", "2")
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	var log bytes.Buffer
	s, err := New(Options{MaxInFlight: 10, Upstream: u, Log: &log})
	require.NoError(t, err)
	front := httptest.NewServer(s)
	get(t, front.Client(), front.URL+"/")
	front.Close()
	require.NoError(t, s.Close())

	recs, err := csv.NewReader(bytes.NewReader(log.Bytes())).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	cut := recs[1][6+int(rlheader.HXReset)]
	assert.LessOrEqual(t, len(cut), MaxHeaderText)
	assert.True(t, strings.HasPrefix(hostile, strings.TrimSuffix(cut, "...")) && utf8.ValidString(cut), "cut, not garbled")
	assert.Equal(t, "1, 2", recs[1][6+int(rlheader.HRetryAfter)], "a repeated header's values joined")

	open := func() (io.Reader, error) { return bytes.NewReader(log.Bytes()), nil }
	l, err := infer.Read("requests.csv", open, infer.ReadOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, l.BadHeaders[rlheader.HXReset].N)
	assert.LessOrEqual(t, len(l.BadHeaders[rlheader.HXReset].Err), 200, "the error quotes a bounded text")
}

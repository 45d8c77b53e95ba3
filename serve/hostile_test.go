package serve

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
)

// hangGuard is how long a test waits on something that must not hang
// before calling it a hang; no test waits it out otherwise.
const hangGuard = 10 * time.Second

// serveOne answers one request through h, at most hangGuard late.
func serveOne(t *testing.T, h http.Handler, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header[hdr[i]] = []string{hdr[i+1]}
	}
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		require.FailNow(t, "the server hangs", "%s %q", path, hdr)
	}
	return rec
}

// scrape reads the metrics as Prometheus parses them.
func scrape(t *testing.T, h http.Handler) map[string][]map[string]string {
	t.Helper()
	rec := serveOne(t, h, "/metrics")
	require.Equal(t, 200, rec.Code, rec.Body.String())
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	out := map[string][]map[string]string{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			l := map[string]string{"value": strconv.FormatFloat(m.GetGauge().GetValue()+m.GetCounter().GetValue(), 'g', -1, 64)}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out[name] = append(out[name], l)
		}
	}
	return out
}

// TestNonUTF8KeyScrapeDoesNotWedge: a scrape once left the key's mutex
// locked when the metrics library panicked on a label that is not UTF-8,
// and the next request of the key hung the server for good.
func TestNonUTF8KeyScrapeDoesNotWedge(t *testing.T) {
	s, err := New(Options{Rules: []rule.Rule{{Limit: 5, Window: time.Second}}, KeyHeader: "X-Key", MetricsPath: "/metrics"})
	require.NoError(t, err)
	assert.Equal(t, 200, serveOne(t, s, "/", "X-Key", "caf\xe9").Code)
	m := scrape(t, s)
	assert.Contains(t, m["rlcheck_violations_total"], map[string]string{"key": `caf\xe9`, "rule": "5/1s", "value": "0"})
	assert.Equal(t, 200, serveOne(t, s, "/", "X-Key", "caf\xe9").Code)
	assert.Equal(t, 200, serveOne(t, s, "/", "X-Key", "alice").Code)
	judged, _ := s.Requests()
	assert.Equal(t, int64(3), judged)
}

// TestQuietKeysAreGivenBack: keys whose windows have passed leave the key
// table (they were only marked idle), their verdicts kept, and the
// metrics name at most MetricsKeys keys, the others summed up.
func TestQuietKeysAreGivenBack(t *testing.T) {
	var log bytes.Buffer
	rules := []rule.Rule{{Limit: 1, Window: time.Microsecond}}
	s, err := New(Options{Rules: rules, KeyHeader: "K", MetricsPath: "/metrics", MetricsKeys: 3, Record: true, Log: &log})
	require.NoError(t, err)
	const n = 3 * sweepEvery
	for i := range n {
		k := strconv.Itoa(i)
		if i%1000 == 0 {
			k = "hot" // the same key again and again, given back between
		}
		serveOne(t, s, "/", "K", k)
		serveOne(t, s, "/", "K", k)
	}
	s.mu.Lock()
	live := len(s.keys)
	s.mu.Unlock()
	assert.Less(t, live, 2*sweepEvery, "keys given back")
	m := scrape(t, s)
	var sum float64
	var labels []string
	for _, l := range m["rlcheck_violations_total"] {
		v, _ := strconv.ParseFloat(l["value"], 64)
		sum += v
		labels = append(labels, l["key"])
	}
	assert.ElementsMatch(t, []string{"hot", "1", "2", metrics.OtherKeys}, labels)
	require.NoError(t, s.Close())
	res, err := logcheck.Run([]logcheck.Input{{Name: "log", R: &log}}, logcheck.Config{Rules: rules, Read: LogReadOptions(true)})
	require.NoError(t, err)
	assert.Equal(t, res.Violations(), s.Violations(), "the verdicts of the keys given back are kept")
	assert.Equal(t, float64(res.Violations()), sum, "and counted in the metrics")
}

// TestHungUpstreamIsCut: an upstream that never answered its first request
// held every later row of the log back, in memory, for good; now it is
// answered 504 after the timeout, and the log moves on.
func TestHungUpstreamIsCut(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	defer up.Close()
	defer close(release)
	u, _ := url.Parse(up.URL)
	var log syncBuffer
	s, err := New(Options{MaxInFlight: 1000, Upstream: u, UpstreamTimeout: 300 * time.Millisecond, Log: &log})
	require.NoError(t, err)
	hung := make(chan *httptest.ResponseRecorder, 1)
	go func() { hung <- serveOne(t, s, "/hang") }()
	for s.inFlight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	for range 20 {
		assert.Equal(t, 200, serveOne(t, s, "/fast").Code)
	}
	var rec *httptest.ResponseRecorder
	select {
	case rec = <-hung:
	case <-time.After(hangGuard):
		require.FailNow(t, "the hung upstream request was never cut")
	}
	assert.Equal(t, http.StatusGatewayTimeout, rec.Code)
	require.NoError(t, s.log.flush())
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 22, "every row written, the store of the log empty")
	assert.True(t, strings.HasSuffix(strings.Split(lines[1], ",")[2], "504"), lines[1])
	assert.Empty(t, s.log.pending)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSweepSparesTheArrivingKey: the sweep that runs at an arrival once
// gave back the very key arriving (quiet until then), which went on
// judging apart from the table, so the key's next request found a fresh
// key with nothing in flight.
func TestSweepSparesTheArrivingKey(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			<-release
		}
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	s, err := New(Options{MaxInFlight: 1, KeyHeader: "K", Upstream: u})
	require.NoError(t, err)
	assert.Equal(t, 200, serveOne(t, s, "/", "K", "x").Code)
	for i := range sweepEvery - 2 {
		serveOne(t, s, "/", "K", strconv.Itoa(i))
	}
	blocked := make(chan int, 1)
	go func() { blocked <- serveOne(t, s, "/block", "K", "x").Code }() // the arrival that sweeps
	for s.inFlight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, http.StatusTooManyRequests, serveOne(t, s, "/", "K", "x").Code, "x has one in flight")
	close(release)
	assert.Equal(t, 200, <-blocked)
	assert.Equal(t, int64(1), s.Violations())
}

package serve

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// running is a Run in progress on a loopback port.
type running struct {
	url  string
	log  string
	out  *bytes.Buffer
	stop context.CancelFunc
	done chan struct{}
	res  *report.Result
	err  error
}

func start(t *testing.T, opt Options) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{
		url: "http://" + ln.Addr().String(), log: filepath.Join(t.TempDir(), "requests.csv"),
		out: &bytes.Buffer{}, stop: cancel, done: make(chan struct{}),
	}
	if opt.MetricsPath == "" {
		opt.MetricsPath = "/metrics"
	}
	go func() {
		defer close(r.done)
		r.res, r.err = Run(ctx, Config{Options: opt, Judge: judgeLog, Listener: ln, LogPath: r.log, Out: r.out})
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// finish stops the server and returns its verdict.
func (r *running) finish(t *testing.T) *report.Result {
	t.Helper()
	r.stop()
	<-r.done
	require.NoError(t, r.err)
	require.NotNil(t, r.res)
	return r.res
}

// logRow is one line of the request log.
type logRow struct {
	at, dur int64
	key     string
	status  int
}

func readLog(t *testing.T, path string) []logRow {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, strings.Split(LogHeader, ","), recs[0][:6])
	var rows []logRow
	for _, rec := range recs[1:] {
		at, err1 := strconv.ParseInt(rec[0], 10, 64)
		st, err2 := strconv.Atoi(rec[2])
		dur, err3 := strconv.ParseInt(rec[3], 10, 64)
		require.NoError(t, err1)
		require.NoError(t, err2)
		require.NoError(t, err3)
		rows = append(rows, logRow{at: at, key: rec[1], status: st, dur: dur})
	}
	return rows
}

// oracle counts, by the definitions, the log's violations per rule (summed
// over keys) and of the in-flight cap, and which lines broke anything.
func oracle(rows []logRow, rules []rule.Rule, b rule.Boundary, maxInFlight int) (perRule []int64, inFlight int64, bad []bool) {
	perRule = make([]int64, len(rules))
	bad = make([]bool, len(rows))
	for i, ri := range rows {
		for r, ru := range rules {
			earlier := 0
			for j := 0; j < i; j++ {
				if rows[j].key == ri.key && b.Within(time.Duration(ri.at-rows[j].at), ru.Window) {
					earlier++
				}
			}
			if earlier >= ru.Limit {
				perRule[r]++
				bad[i] = true
			}
		}
		if maxInFlight > 0 {
			open := 0
			for j := 0; j < i; j++ {
				if rows[j].key == ri.key && rows[j].at+rows[j].dur > ri.at {
					open++
				}
			}
			if open >= maxInFlight {
				inFlight++
				bad[i] = true
			}
		}
	}
	return perRule, inFlight, bad
}

// assertVerdict holds the log and the verdict to the definitions, and the
// answers to the verdict: a request answered 429 exactly when it broke
// the contract (unless recording).
func assertVerdict(t *testing.T, r *running, res *report.Result, opt Options, answered int) []logRow {
	t.Helper()
	rows := readLog(t, r.log)
	require.Len(t, rows, answered, "every answered request is in the log")
	for i := 1; i < len(rows); i++ {
		require.Less(t, rows[i-1].at, rows[i].at, "the log is in strict arrival order")
	}
	perRule, inFlight, bad := oracle(rows, opt.Rules, opt.Boundary, opt.MaxInFlight)
	for i := range opt.Rules {
		assert.Equal(t, perRule[i], res.Totals[i].Violations, "rule %v", opt.Rules[i])
	}
	if opt.MaxInFlight > 0 {
		require.NotNil(t, res.InFlight)
		assert.Equal(t, inFlight, res.InFlight.Violations)
	}
	for i, row := range rows {
		want := opt.Status
		if want == 0 {
			want = 200
		}
		if bad[i] && !opt.Record {
			want = http.StatusTooManyRequests
		}
		assert.Equal(t, want, row.status, "log line %d", i+2)
	}
	return rows
}

func get(t *testing.T, c *http.Client, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

func TestGoClientRejectsPastTheContract(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 3, Window: 40 * time.Millisecond}, {Limit: 5, Window: 150 * time.Millisecond}}}
	r := start(t, opt)
	c := &http.Client{}
	var codes []int
	for i := range 30 {
		resp, body := get(t, c, r.url+"/v1/items/"+strconv.Itoa(i))
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
			assert.Equal(t, `"3-per-40ms";q=3, "5-per-150ms";q=5`, resp.Header.Get("RateLimit-Policy"))
			assert.Contains(t, resp.Header.Get("RateLimit"), ";r=0;t=1")
			var rej rejection
			require.NoError(t, json.Unmarshal(body, &rej))
			require.NotEmpty(t, rej.Violations, string(body))
			v := rej.Violations[0]
			assert.Greater(t, v.Sends, int64(v.Limit))
			assert.LessOrEqual(t, v.Start, v.End)
		}
		time.Sleep(5 * time.Millisecond)
	}
	res := r.finish(t)
	assert.Contains(t, codes, http.StatusTooManyRequests)
	assert.Contains(t, codes, http.StatusOK)
	rows := assertVerdict(t, r, res, opt, len(codes))
	for i, row := range rows {
		assert.Equal(t, codes[i], row.status, "one client, one request at a time: log order is request order")
	}
	assert.Contains(t, r.out.String(), "requests.csv: 30 sends")
}

func TestRecordAnswersEverything(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 2, Window: 50 * time.Millisecond}}, Boundary: rule.Closed, Record: true, Status: 201, Body: "made"}
	r := start(t, opt)
	c := &http.Client{}
	for range 10 {
		resp, body := get(t, c, r.url+"/x")
		assert.Equal(t, 201, resp.StatusCode)
		assert.Equal(t, "made", string(body))
	}
	res := r.finish(t)
	assert.Positive(t, res.Violations())
	assertVerdict(t, r, res, opt, 10)
}

func fixed(d time.Duration) workload.Dist { return workload.Dist{Kind: workload.Fixed, A: d} }

func TestInFlightCapCountsUntilTheAnswer(t *testing.T) {
	opt := Options{MaxInFlight: 2, Latency: fixed(400 * time.Millisecond)}
	r := start(t, opt)
	c := &http.Client{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 5 {
		wg.Go(func() {
			resp, _ := get(t, c, r.url+"/slow")
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	resp, _ := get(t, c, r.url+"/after") // the slots are free again
	assert.Equal(t, 200, resp.StatusCode)
	res := r.finish(t)
	assert.Equal(t, map[int]int{200: 2, 429: 3}, codes)
	rows := assertVerdict(t, r, res, opt, 6)
	for _, row := range rows {
		if row.status == 200 {
			assert.GreaterOrEqual(t, row.dur, int64(400*time.Millisecond))
		}
	}
}

func TestPerKey(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, KeyHeader: "X-API-Key"}
	r := start(t, opt)
	c := &http.Client{}
	for _, k := range []string{"a", "b", "a", "b", "a,\"x\"", "a"} {
		get(t, c, r.url+"/", "X-API-Key", k)
	}
	res := r.finish(t)
	assert.Equal(t, int64(1), res.Violations(), "only key a's third request")
	rows := assertVerdict(t, r, res, opt, 6)
	assert.Equal(t, "a,\"x\"", rows[4].key)
	assert.Equal(t, 429, rows[5].status)
}

func TestProxyForwardsWhatTheContractAllows(t *testing.T) {
	var hits sync.Map
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Store(r.URL.Path, true)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "upstream "+r.URL.Path)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	opt := Options{Rules: []rule.Rule{{Limit: 2, Window: time.Minute}}, Upstream: u}
	r := start(t, opt)
	c := &http.Client{}
	var got []string
	for i := range 4 {
		resp, body := get(t, c, r.url+"/p"+strconv.Itoa(i))
		got = append(got, strconv.Itoa(resp.StatusCode)+" "+string(body[:min(len(body), 11)]))
	}
	res := r.finish(t)
	assert.Equal(t, []string{"202 upstream /p", "202 upstream /p", "429 {\"error\":\"r", "429 {\"error\":\"r"}, got)
	_, forwarded := hits.Load("/p2")
	assert.False(t, forwarded)
	rows := readLog(t, r.log)
	require.Len(t, rows, 4)
	assert.Equal(t, 202, rows[0].status)
	assert.Equal(t, int64(2), res.Violations())
}

func TestMetrics(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 1, Window: time.Minute}}, KeyHeader: "K"}
	r := start(t, opt)
	c := &http.Client{}
	get(t, c, r.url+"/", "K", "k1")
	get(t, c, r.url+"/", "K", "k1")
	_, body := get(t, c, r.url+"/metrics")
	text := string(body)
	assert.Contains(t, text, `rlcheck_violations_total{key="k1",rule="1/1m"} 1`)
	assert.Contains(t, text, `rlcheck_rule_usage_ratio{key="k1",rule="1/1m",stat="current"} 2`)
	assert.Contains(t, text, `rlcheck_serve_requests_total{verdict="violation"} 1`)
	res := r.finish(t)
	assertVerdict(t, r, res, opt, 2) // the scrape is not judged
}

func TestHeadersCountDown(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 2, Window: 10 * time.Second}, {Limit: 5, Window: time.Minute}}}
	r := start(t, opt)
	c := &http.Client{}
	var fields, retry []string
	for range 3 {
		resp, _ := get(t, c, r.url+"/")
		assert.Equal(t, `"2-per-10s";q=2;w=10, "5-per-1m";q=5;w=60`, resp.Header.Get("RateLimit-Policy"))
		fields = append(fields, resp.Header.Get("RateLimit"))
		retry = append(retry, resp.Header.Get("Retry-After"))
	}
	r.finish(t)
	assert.Equal(t, []string{
		`"2-per-10s";r=1, "5-per-1m";r=4`,
		`"2-per-10s";r=0;t=10, "5-per-1m";r=3`,
		`"2-per-10s";r=0;t=10, "5-per-1m";r=2`,
	}, fields)
	assert.Equal(t, []string{"", "", "10"}, retry, "a slot frees when the second request leaves the window")
}

// judgeLog is the Judge rlcheck serve runs with: check on the request log.
func judgeLog(name string, log io.Reader, perKey bool, o Options) (*report.Result, error) {
	read, refusals := LogCheckConfig(o, perKey)
	return logcheck.Run([]logcheck.Input{{Name: name, R: log}}, logcheck.Config{
		Rules: o.Rules, Boundary: o.Boundary, MaxInFlight: o.MaxInFlight, Read: read, Refusals: refusals,
	})
}

// TestRunReportsWhatItRefusedUnjudged: requests that no window could ever
// admit are answered 413 to the last, and the run still writes its report,
// saying how many it refused.
func TestRunReportsWhatItRefusedUnjudged(t *testing.T) {
	rules := []rule.Rule{{Limit: 1000, Window: time.Second, Unit: "tokens"}}
	opt := Options{Rules: rules, Costs: []CostSource{{Unit: "tokens", Header: "X-Tokens"}}}
	for _, admitted := range []int{0, 1} {
		r := start(t, opt)
		c := &http.Client{}
		for range 11 {
			resp, _ := get(t, c, r.url+"/x", "X-Tokens", "999999999999999999")
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		}
		for range admitted {
			resp, _ := get(t, c, r.url+"/x", "X-Tokens", "10")
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		}
		r.stop()
		<-r.done
		require.NoError(t, r.err)
		assert.Contains(t, r.out.String(), "11 requests answered 413 unjudged and unlogged")
		if admitted == 0 {
			assert.Nil(t, r.res)
			assert.Contains(t, r.out.String(), "no requests judged")
			continue
		}
		require.NotNil(t, r.res)
		assert.Zero(t, r.res.Violations())
		assert.Contains(t, r.out.String(), "OK: every rule held")
	}
}

//go:build linux

package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/testrun"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// helperEnv makes the test binary a `serve` process for
// TestHostileClients: the value is the run's duration ("0": until
// SIGTERM) and the latency of every answer.
const helperEnv = "RLCHECK_SERVE_HELPER"

// maxRunMB is the bound docs/serve.md states for the peak resident memory
// over the whole hostile run, the verdict on the 100,000-key log at the end
// included. While serving the bound is derived from what serve holds (see
// servingBoundMB).
const maxRunMB = 384

// servingBoundMB derives the bound on the peak resident memory while
// serving from what serve holds: the process as it listened (baseMB); the
// keys held at the peak at maxKeyBytes each, twice over, since the
// collector lets the heap grow to twice what it kept live (GOGC=100); per
// scrape (two run at once) a copy of the key list, 8 B a key, and 1 MB for
// the series of at most --metrics-keys labels; per connection (at most 16
// here) 64 KB of buffers and stack; and 16 MB of headroom for the
// runtime's own spans and fragmentation.
func servingBoundMB(baseMB int64, peakKeys int) int64 {
	const mb = 1 << 20
	keys := 2 * int64(peakKeys) * maxKeyBytes
	scrapes := 2 * (8*int64(peakKeys) + mb)
	conns := int64(16 * 64 << 10)
	return baseMB + (keys+scrapes+conns)/mb + 16
}

// peakKeysRE reads the keys held at once from serve's stop line.
var peakKeysRE = regexp.MustCompile(`at most (\d+) keys held at once`)

// raceEnabled is set under the race detector, which multiplies memory and
// time: the load is then a tenth and the memory is not bounded.
var raceEnabled bool

// TestServeHelperProcess is the server of TestHostileClients, run as a
// process of its own so that its memory can be measured and signalled.
func TestServeHelperProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("run by TestHostileClients")
	}
	f := strings.Fields(spec)
	require.Len(t, f, 2)
	dur, err1 := time.ParseDuration(f[0])
	lat, err2 := time.ParseDuration(f[1])
	require.NoError(t, err1)
	require.NoError(t, err2)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	_, err := Run(ctx, Config{
		Options: Options{
			Rules: []rule.Rule{{Limit: 5, Window: time.Second}}, KeyHeader: "X-Key", MetricsPath: "/metrics", Latency: fixed(lat),
		},
		Judge: judgeLog, Listen: "127.0.0.1:0", Duration: dur, Out: os.Stdout, ErrOut: os.Stderr,
		Report: report.Options{MaxKeys: 20}, // as rlcheck serve's --keys
	})
	require.NoError(t, err)
}

// helper is a serve process on a loopback port.
type helper struct {
	cmd  *exec.Cmd
	url  string
	out  bytes.Buffer
	done chan error
	at   time.Time      // when it listened
	base int64          // its peak resident memory then, MB
	stop chan time.Time // when it said it stopped serving
	peak chan int       // the most keys it held at once, from its stop line
}

func startHelper(t *testing.T, dur, lat time.Duration) *helper {
	t.Helper()
	h := &helper{done: make(chan error, 1), stop: make(chan time.Time, 1), peak: make(chan int, 1)}
	h.cmd = exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$", "-test.v")
	// GOGC=100: the server's memory is measured as rlcheck serve runs, with
	// the collector's default target, not the tests' (testrun.Main).
	h.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%v %v", helperEnv, dur, lat), "GOGC=100")
	h.cmd.Stdout = &h.out
	stderr, err := h.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, h.cmd.Start())
	sc := bufio.NewScanner(stderr)
	addr := regexp.MustCompile(`listening on (http://[^ ]+) `)
	for h.url == "" && sc.Scan() {
		if m := addr.FindStringSubmatch(sc.Text()); m != nil {
			h.url, h.at = m[1], time.Now()
		}
	}
	require.NotEmpty(t, h.url, "the server never listened")
	h.base = hwmMB(t, h.cmd.Process.Pid)
	go func() {
		for sc.Scan() {
			if strings.Contains(sc.Text(), "stopped after") {
				h.stop <- time.Now()
				if m := peakKeysRE.FindStringSubmatch(sc.Text()); m != nil {
					n, _ := strconv.Atoi(m[1])
					h.peak <- n
				}
			}
		}
	}()
	go func() { h.done <- h.cmd.Wait() }()
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			h.cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// wait returns once the process ended, at most hangGuard later.
func (h *helper) wait(t *testing.T) time.Time {
	t.Helper()
	select {
	case err := <-h.done:
		require.NoError(t, err, h.out.String())
	case <-time.After(hangGuard):
		require.FailNow(t, "the server did not end")
	}
	return time.Now()
}

// hostile sends the requests built to hurt, each of which must be
// answered: a key that is not UTF-8, one of 8 KB, an empty one and none.
func hostile(t *testing.T, c *http.Client, url string) int {
	keys := []string{"caf\xe9", strings.Repeat("k", 8<<10), "", "caf\xe9", "alice"}
	for _, k := range keys {
		req, err := http.NewRequest("GET", url+"/", nil)
		require.NoError(t, err)
		req.Header["X-Key"] = []string{k}
		resp, err := c.Do(req)
		require.NoError(t, err, "key %q", k)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Contains(t, []int{200, 429}, resp.StatusCode)
	}
	resp, body := get(t, c, url+"/")
	assert.Equal(t, 200, resp.StatusCode, string(body))
	_, body = get(t, c, url+"/metrics")
	assert.Contains(t, string(body), `key="caf\\xe9"`)
	return len(keys) + 1
}

// hwmMB returns a process's peak resident memory so far.
func hwmMB(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	require.NotNil(t, m)
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb >> 10
}

// slowloris opens a connection that sends half a request and stops.
func slowloris(t *testing.T, url string) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nX-Key: sl")
}

// TestHostileClients is the acceptance test of serve under hostile
// clients: keys that are not UTF-8, of 8 KB or empty, 8,000 distinct keys
// (100,000 with RLCHECK_FULL=1), concurrent scrapes, a half-sent request
// and one waiting out its latency at the end. Serve answers every request, ends on its duration
// and on SIGTERM within 2 s, writes its report, and its peak resident
// memory stays within servingBoundMB while serving and maxRunMB over the
// run.
func TestHostileClients(t *testing.T) {
	if testing.Short() {
		t.Skip("8,000 requests")
	}
	t.Parallel()
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		h := startHelper(t, 0, 0)
		c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: hangGuard}
		sent := hostile(t, c, h.url)
		slowloris(t, h.url)
		// The bound while serving is derived from the peak of keys held
		// at once, whatever their number: 8,000 every day; the 100,000
		// the bound over the run speaks of take twelve times as long and
		// run with RLCHECK_FULL=1.
		distinct, workers := 8_000, 8
		if testrun.Full() {
			distinct = 100_000
		}
		if raceEnabled {
			distinct /= 10
		}
		var answered, scrapes atomic.Int64
		var wg sync.WaitGroup
		stopScrapes := make(chan struct{})
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stopScrapes:
						return
					default:
					}
					resp, err := c.Get(h.url + "/metrics")
					if !assert.NoError(t, err) {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					assert.Equal(t, 200, resp.StatusCode)
					scrapes.Add(1)
				}
			})
		}
		var load sync.WaitGroup
		for w := range workers {
			load.Go(func() {
				for i := w; i < distinct; i += workers {
					req, _ := http.NewRequest("GET", h.url+"/", nil)
					req.Header.Set("X-Key", fmt.Sprintf("%0200d", i))
					resp, err := c.Do(req)
					if !assert.NoError(t, err) {
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					answered.Add(1)
				}
			})
		}
		load.Wait()
		close(stopScrapes)
		wg.Wait()
		assert.Equal(t, int64(distinct), answered.Load(), "every request answered")
		assert.Positive(t, scrapes.Load())
		serving := hwmMB(t, h.cmd.Process.Pid)
		signalled := time.Now()
		require.NoError(t, h.cmd.Process.Signal(syscall.SIGTERM))
		ended := h.wait(t)
		stopped := <-h.stop
		peak := <-h.peak
		bound := servingBoundMB(h.base, peak)
		t.Logf("peak resident memory %d MB serving, bound %d MB: %d MB at the start, at most %d keys held at once", serving, bound, h.base, peak)
		if !raceEnabled {
			assert.LessOrEqual(t, serving, bound, "peak resident memory while serving, MB")
		}
		assert.Less(t, stopped.Sub(signalled), 2*time.Second, "stops serving on SIGTERM")
		t.Logf("stopped serving %v after SIGTERM, ended %v after it, the verdict on the log written", stopped.Sub(signalled), ended.Sub(signalled))
		assert.Contains(t, h.out.String(), fmt.Sprintf(": %d sends", distinct+sent), "the report")
		rss := h.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // KB to MB
		t.Logf("peak resident memory %d MB serving, %d MB at the end; %d scrapes", serving, rss, scrapes.Load())
		if !raceEnabled {
			assert.Less(t, rss, int64(maxRunMB), "peak resident memory over the run, MB")
		}
	})
	t.Run("duration", func(t *testing.T) {
		t.Parallel()
		const dur = 2 * time.Second
		h := startHelper(t, dur, time.Minute)
		c := &http.Client{Timeout: hangGuard}
		slowloris(t, h.url)
		waiting := make(chan int, 1)
		go func() {
			resp, err := c.Get(h.url + "/")
			if !assert.NoError(t, err) {
				waiting <- 0
				return
			}
			resp.Body.Close()
			waiting <- resp.StatusCode
		}()
		ended := h.wait(t)
		assert.Less(t, ended.Sub(h.at), dur+2*time.Second, "ends on its duration")
		assert.Equal(t, 200, <-waiting, "the request waiting out its latency is answered")
		assert.Contains(t, h.out.String(), ": 1 send", "the report")
	})
}

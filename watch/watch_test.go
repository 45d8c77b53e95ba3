package watch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/syncbuf"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

var rules = []rule.Rule{{Limit: 3, Window: 100 * time.Millisecond}, {Limit: 20, Window: time.Second}}

// sends returns n CSV lines "ts,key" in time order from t, with gaps that
// break the rules now and then (some exactly one window apart).
func sends(rng *rand.Rand, t *int64, n int) []string {
	var out []string
	for range n {
		switch rng.IntN(5) {
		case 0:
		case 1:
			*t += int64(100 * time.Millisecond)
		default:
			*t += rng.Int64N(int64(80 * time.Millisecond))
		}
		out = append(out, fmt.Sprintf("%d,k%d", *t, rng.IntN(2)))
	}
	return out
}

func appendLines(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = io.WriteString(f, strings.Join(lines, "\n")+"\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// linesRead scrapes the lines read so far from the metrics.
func linesRead(t *testing.T, url string) int {
	t.Helper()
	body := scrape(t, url)
	m := regexp.MustCompile(`rlcheck_watch_lines_total\{file="[^"]*"\} (\d+)`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// waitLines waits until watch has read n lines.
func waitLines(t *testing.T, url string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for linesRead(t, url) < n {
		require.True(t, time.Now().Before(deadline), "watch read %d lines of %d", linesRead(t, url), n)
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRotateTruncate appends to a file, rotates it (rename and a new
// file), truncates it and appends again while watch runs: every line is
// judged once, and the violations printed are check's on the lines
// concatenated.
func TestRotateTruncate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.csv")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String() + "/metrics"
	out, errOut := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sum *Summary
	var runErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sum, runErr = Run(ctx, Config{
			Rules: rules, Read: sendlog.Options{KeyCol: "key"}, Paths: []string{path},
			Poll: 5 * time.Millisecond, JSON: true, Out: out, ErrOut: errOut, Listener: ln,
		})
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	at := int64(1_700_000_000) * int64(time.Second)
	var all []string // the data lines, in the order written
	read := 0
	write := func(lines []string, header bool) {
		if header {
			appendLines(t, path, []string{"ts,key"})
			read++
		}
		appendLines(t, path, lines)
		all = append(all, lines...)
		read += len(lines)
		waitLines(t, url, read)
	}
	write(sends(rng, &at, 40), true)
	write(sends(rng, &at, 30), false)
	require.NoError(t, os.Rename(path, path+".1")) // rotation
	write(sends(rng, &at, 50), true)
	require.NoError(t, os.Truncate(path, 0)) // truncation, then a shorter file
	write(sends(rng, &at, 5), true)
	write(sends(rng, &at, 60), false)
	// Every line is read: the metrics show the violations printed so far.
	metrics := scrape(t, url)
	printed := out.String()
	for _, r := range rules {
		n := strings.Count(printed, fmt.Sprintf(`"rule":%q`, r.String()))
		series := regexp.MustCompile(fmt.Sprintf(`rlcheck_violations_total\{key="k\d",rule=%q\} (\d+)\n`, r.String())).FindAllStringSubmatch(metrics, -1)
		require.NotEmpty(t, series, "per key")
		sum := 0
		for _, m := range series {
			v, _ := strconv.Atoi(m[1])
			sum += v
		}
		assert.Equal(t, n, sum, "rule %v, over the keys", r)
	}
	assert.Contains(t, metrics, fmt.Sprintf("rlcheck_watch_lines_total{file=%q} %d\n", path, read))
	// A last line without its newline counts at the end, as for check.
	last := sends(rng, &at, 1)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	io.WriteString(f, last[0])
	f.Close()
	all = append(all, last...)
	read++

	cancel()
	<-done
	require.NoError(t, runErr)
	assert.Equal(t, int64(len(all)), sum.Sends, "every line judged once")
	assert.Equal(t, int64(read), sum.Lines)

	concat := "ts,key\n" + strings.Join(all, "\n") + "\n"
	res, err := logcheck.Run([]logcheck.Input{{Name: "all.csv", R: strings.NewReader(concat)}},
		logcheck.Config{Rules: rules, Read: sendlog.Options{KeyCol: "key"}, List: 1 << 20})
	require.NoError(t, err)
	require.Positive(t, res.Violations())
	type found struct {
		at   int64
		rule string
		key  string
	}
	var want, got []found
	for _, g := range res.Groups {
		for i, rr := range g.Report.Rules {
			for _, v := range rr.Listed {
				want = append(want, found{v.Send.At, rules[i].String(), g.Key})
			}
		}
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var v Violation
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), sc.Text())
		got = append(got, found{v.At, v.Rule, v.Key})
	}
	assert.ElementsMatch(t, want, got)
	for i, r := range rules {
		assert.Equal(t, res.Totals[i].Violations, sum.Violations[i], "rule %v", r)
	}
	summary := out.String()[strings.LastIndex(out.String(), "}\n")+2:]
	assert.Contains(t, summary, fmt.Sprintf("watched 1 file: %d lines, %d sends", read, len(all)))
	assert.Empty(t, errOut.String()[strings.Index(errOut.String(), "\n")+1:], "no line out of order")
}

// TestIdleKeysDropped feeds sends from many short-lived keys and one busy
// one: keys whose windows have passed are dropped, and the totals still
// equal check's.
func TestIdleKeysDropped(t *testing.T) {
	rs := []rule.Rule{{Limit: 2, Window: 5 * time.Millisecond}}
	w := newWatcher(Config{Rules: rs, Read: sendlog.Options{KeyCol: "key"}, Out: io.Discard})
	f := &follower{path: "x.csv"}
	var csv strings.Builder
	csv.WriteString("ts,key\n")
	for i := range 10000 {
		at := int64(1_700_000_000)*int64(time.Second) + int64(i)*int64(time.Millisecond)
		key := "k" + strconv.Itoa(i)
		if i%2 == 0 {
			key = "hot"
		}
		w.observe(f, sendlog.Record{At: at, Key: []byte(key), Line: int64(i + 2)})
		fmt.Fprintf(&csv, "%d,%s\n", at, key)
	}
	assert.Less(t, len(w.keys), 10000-8192+10, "the keys gone quiet before the last sweep are dropped")
	for _, s := range w.keys {
		w.fold(s)
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: "x.csv", R: strings.NewReader(csv.String())}},
		logcheck.Config{Rules: rs, Read: sendlog.Options{KeyCol: "key"}})
	require.NoError(t, err)
	require.Positive(t, res.Totals[0].Violations)
	assert.Equal(t, res.Totals[0].Violations, w.sum.Violations[0])
}

// TestOutOfOrderAcrossFiles reads two files one after the other: a line of
// the second earlier than one judged from the first is reported and left
// out, and bad input ends the run with check's error.
func TestOutOfOrderAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	require.NoError(t, os.WriteFile(a, []byte("1.0\n3.0\n3.5\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("2.0\n3.9"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // one look at the files, then the end
	var out, errOut bytes.Buffer
	sum, err := Run(ctx, Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, Paths: []string{a, b}, Out: &out, ErrOut: &errOut})
	require.NoError(t, err)
	assert.Equal(t, b+":1: out of order: 2.000000000 s is before 3.500000000 s, read earlier; left out\n", errOut.String())
	assert.Equal(t, &Summary{Lines: 5, Sends: 5, OutOfOrder: 1, Violations: []int64{1}, Peak: []int64{3}}, sum)
	assert.Contains(t, out.String(), b+":2: 3.900000000 s breaks 2/1s: 3 sends in the window from 3.000000000 s\n")

	require.NoError(t, os.WriteFile(b, []byte("5.0\nfive\n"), 0o644))
	_, err = Run(ctx, Config{Rules: []rule.Rule{{Limit: 2, Window: time.Second}}, Paths: []string{b}, Out: &out})
	assert.EqualError(t, err, b+`:2: not a timestamp (want decimal seconds, an integer epoch or RFC 3339): "five"`)
}

// TestMetricsPerKeyCapped: the series carry the key (they had no key
// label), the first MetricsKeys keys their own, the later ones summed up,
// the keys dropped still counted.
func TestMetricsPerKeyCapped(t *testing.T) {
	rs := []rule.Rule{{Limit: 1, Window: time.Millisecond}}
	w := newWatcher(Config{Rules: rs, Read: sendlog.Options{KeyCol: "key"}, Out: io.Discard, MetricsKeys: 2})
	f := &follower{path: "x.csv"}
	var want int64
	for i := range 3 * sweepEvery {
		at := int64(1_700_000_000)*int64(time.Second) + int64(i/2)*int64(time.Millisecond)
		key := []byte("k" + strconv.Itoa(i/2%5))
		if i == 7 {
			key = []byte("caf\xe9")
		}
		w.observe(f, sendlog.Record{At: at, Key: key, Line: int64(i + 2)})
	}
	for _, s := range w.keys {
		rep := s.chk.Report()
		want += rep.Violations()
	}
	want += w.sum.Violations[0]
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{w})
	fams, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, fam := range fams {
		if fam.GetName() != "rlcheck_violations_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "key" {
					got[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	assert.ElementsMatch(t, []string{"k0", "k1", metrics.OtherKeys}, slices.Collect(maps.Keys(got)))
	var sum float64
	for _, v := range got {
		sum += v
	}
	assert.Positive(t, want)
	assert.Equal(t, float64(want), sum)
}

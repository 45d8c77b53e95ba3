package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// Config says what to follow and how to report.
type Config struct {
	Rules    []rule.Rule
	Boundary rule.Boundary
	// Read is how lines are read, as check reads them (layout, columns,
	// key, unit); Paths are the files followed.
	Read  sendlog.Options
	Paths []string
	// Poll is how often the files are looked at (default 100 ms).
	Poll time.Duration
	// JSON prints each violation as a JSON line instead of text.
	JSON bool
	// Out gets the violations as they are found, and the summary at the
	// end; ErrOut the lines out of order and where metrics are served.
	Out, ErrOut io.Writer
	// Listen serves Prometheus metrics at MetricsPath (default /metrics)
	// when set; Listener is used instead when given.
	Listen      string
	Listener    net.Listener
	MetricsPath string
	// MetricsKeys is how many keys get metric series of their own when the
	// lines are split per key (0: metrics.DefaultMaxKeys, negative: none);
	// later keys are summed up under key="(other keys)".
	MetricsKeys int
}

// Violation is one violation as watch prints it with Config.JSON.
type Violation struct {
	File        string `json:"file"`
	Line        int64  `json:"line"`
	At          int64  `json:"at_ns"`
	Key         string `json:"key,omitempty"`
	Rule        string `json:"rule"`
	WindowStart int64  `json:"window_start_ns"`
	Sends       int64  `json:"sends_in_window"`
	// For a cost rule: the send's cost and the units in its window, the
	// send's own included.
	Cost  int64 `json:"cost,omitempty"`
	Units int64 `json:"units_in_window,omitempty"`
	// For a fixed or first-call rule, the window [from, to) overfilled
	// (none for a first-call send whose cost alone broke the rule with no
	// window open: it opened none);
	// for a bucket rule, the level the send found (sends counts the sends
	// since the bucket was full, from WindowStart).
	FixedFrom   *int64 `json:"fixed_window_from_ns,omitempty"`
	FixedTo     *int64 `json:"fixed_window_to_ns,omitempty"`
	BucketLevel string `json:"bucket_level,omitempty"`
}

// Summary is what was read and found.
type Summary struct {
	Lines, Sends, OutOfOrder int64
	// Violations and Peak are per rule, in Config.Rules order, over every
	// key: the sends that broke the rule, and the most sends in a window.
	Violations, Peak []int64
}

// Total returns the violations over every rule.
func (s *Summary) Total() int64 {
	var n int64
	for _, v := range s.Violations {
		n += v
	}
	return n
}

// watcher is the state of one Run; mu guards it against metric scrapes.
type watcher struct {
	cfg   Config
	mu    sync.Mutex
	files []*follower
	keys  map[string]*stream
	sum   Summary
	// newest is the latest send time read, the instant usage is shown at.
	newest int64
	// cur is the send being judged, for the violations it reports.
	cur  *follower
	rec  sendlog.Record
	key  string
	seen int64
	// labels name the keys' metric series; gone keeps the series of the
	// keys dropped.
	labels *metrics.KeyLabels
	gone   map[string]*metrics.KeySeries
	units  []string // the cost units, as cfg.Read.Costs names them
	err    error    // a send the checker could not take (a cost sum past int64)
}

type stream struct {
	chk   *checker.Checker
	last  int64
	n     int64
	label string // its metric series
}

// Run follows cfg.Paths until ctx ends, reads what was written up to then,
// and returns the summary. Bad input ends it with an *sendlog.InputError.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if len(cfg.Rules) == 0 {
		return nil, errors.New("watch: no rules")
	}
	if len(cfg.Paths) == 0 {
		return nil, errors.New("watch: no files to follow")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.MetricsPath == "" {
		cfg.MetricsPath = "/metrics"
	}
	w := newWatcher(cfg)
	for _, p := range cfg.Paths {
		w.files = append(w.files, &follower{path: p})
	}
	if stop, err := w.serveMetrics(); err != nil {
		return nil, err
	} else {
		defer stop()
	}
	tick := time.NewTicker(cfg.Poll)
	defer tick.Stop()
	for {
		err := w.poll()
		if err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			if err := w.poll(); err != nil {
				return nil, err
			}
			return w.finish()
		case <-tick.C:
		}
	}
}

func newWatcher(cfg Config) *watcher {
	w := &watcher{cfg: cfg, keys: map[string]*stream{}, labels: metrics.NewKeyLabels(cfg.MetricsKeys), gone: map[string]*metrics.KeySeries{}}
	for _, c := range cfg.Read.Costs {
		w.units = append(w.units, c.Unit)
	}
	w.sum.Violations = make([]int64, len(cfg.Rules))
	w.sum.Peak = make([]int64, len(cfg.Rules))
	return w
}

// poll reads what every file gained.
func (w *watcher) poll() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.files {
		if err := f.poll(w); err != nil {
			return err
		}
	}
	return nil
}

// finish ends every file (a last line without its newline counts, as it
// does for check) and writes the summary.
func (w *watcher) finish() (*Summary, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.files {
		if err := f.end(w); err != nil {
			return nil, err
		}
		f.close()
	}
	for _, s := range w.keys {
		w.fold(s)
	}
	sum := w.sum
	fmt.Fprintf(w.cfg.Out, "watched %s: %s, %s", plural(int64(len(w.files)), "file"), plural(sum.Lines, "line"), plural(sum.Sends, "send"))
	if sum.OutOfOrder > 0 {
		fmt.Fprintf(w.cfg.Out, ", %d out of order (left out)", sum.OutOfOrder)
	}
	fmt.Fprintln(w.cfg.Out)
	for i, r := range w.cfg.Rules {
		fmt.Fprintf(w.cfg.Out, "  %-12s %s%s\n", r, plural(sum.Violations[i], "violation"), peakWords(r, sum.Peak[i]))
	}
	return &sum, w.err
}

// peakWords says the fullest window of a rule, in its unit; a bucket has
// no window to say.
func peakWords(r rule.Rule, peak int64) string {
	switch {
	case r.Kind == rule.Bucket:
		return ""
	case r.Unit != "":
		return fmt.Sprintf(", at most %d %s in a window", peak, r.Unit)
	}
	return fmt.Sprintf(", at most %s in a window", plural(peak, "send"))
}

// plural writes "1 send" or "2 sends".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fold adds a key's verdict to the totals.
func (w *watcher) fold(s *stream) {
	rep := s.chk.Report()
	for i, rr := range rep.Rules {
		w.sum.Violations[i] += rr.Violations
		w.sum.Peak[i] = max(w.sum.Peak[i], rr.MaxInWindow)
	}
}

// sweepEvery sends, idle keys are dropped (their verdicts kept in the
// totals).
const sweepEvery = 4096

// observe judges one send read from f.
func (w *watcher) observe(f *follower, rec sendlog.Record) {
	w.sum.Sends++
	key := string(rec.Key)
	s, ok := w.keys[key]
	if !ok {
		s = &stream{chk: checker.New(checker.Config{Rules: w.cfg.Rules, Boundary: w.cfg.Boundary, Units: w.units, OnViolation: w.report})}
		if w.cfg.Read.HasKey() {
			s.label = w.labels.Label(key)
		}
		w.keys[key] = s
	}
	if s.n > 0 && rec.At < s.last {
		w.sum.OutOfOrder++
		if w.cfg.ErrOut != nil {
			fmt.Fprintf(w.cfg.ErrOut, "%s:%d: out of order: %s is before %s, read earlier; left out\n",
				f.path, rec.Line, instant(rec.At), instant(s.last))
		}
		return
	}
	w.cur, w.rec, w.key = f, rec, key
	// In order, checked above; costs are whole numbers from 0 up, checked
	// by the reader; only a window's sum past int64 remains.
	if err := w.judge(s.chk, rec); err != nil && w.err == nil {
		w.err = &sendlog.InputError{File: f.path, Line: rec.Line, Msg: err.Error()}
	}
	s.last, s.n = rec.At, s.n+1
	w.newest = max(w.newest, rec.At)
	if w.seen++; w.seen%sweepEvery == 0 && len(w.keys) > 1 {
		for k, s := range w.keys {
			if s.chk.Idle(w.newest) {
				w.fold(s)
				w.seriesOf(w.gone, s.label).Add(s.chk, nil, 0)
				delete(w.keys, k)
			}
		}
	}
}

// report prints a violation of the send being judged.
func (w *watcher) report(r int, v checker.Violation) {
	out := Violation{
		File: keytext.Show(w.cur.path), Line: w.rec.Line, At: w.rec.At, Key: keytext.Show(w.key),
		Rule: w.cfg.Rules[r].String(), WindowStart: v.WindowStart.At, Sends: v.Count,
		Cost: v.Cost, Units: v.Units, BucketLevel: v.Level,
	}
	if v.Span != nil {
		from, to := v.Span.From, v.Span.To
		out.FixedFrom, out.FixedTo = &from, &to
	}
	if w.cfg.JSON {
		b, _ := json.Marshal(out)
		w.cfg.Out.Write(append(b, '\n'))
		return
	}
	key := ""
	if w.cfg.Read.HasKey() {
		key = fmt.Sprintf(" (key %q)", w.key) // %q writes keytext's form
	}
	fmt.Fprintf(w.cfg.Out, "%s:%d: %s breaks %s%s: %s\n",
		out.File, out.Line, instant(out.At), out.Rule, key, windowWords(w.cfg.Rules[r], out))
}

// windowWords says what a violation overfilled, in the rule's terms.
func windowWords(r rule.Rule, v Violation) string {
	held := ""
	if r.Unit != "" {
		held = fmt.Sprintf(" holding %d %s", v.Units, r.Unit)
	}
	switch {
	case v.BucketLevel != "":
		return fmt.Sprintf("the bucket held %s; %s since it was full, from %s", v.BucketLevel, plural(v.Sends, "send"), instant(v.WindowStart))
	case v.FixedFrom != nil:
		return fmt.Sprintf("%s%s in the %s window from %s to %s", plural(v.Sends, "send"), held, r.Kind, instant(*v.FixedFrom), instant(*v.FixedTo))
	case r.Kind == rule.FirstCall:
		return fmt.Sprintf("its %d %s alone exceed the limit, with no window open: it opened none", v.Cost, r.Unit)
	}
	return fmt.Sprintf("%s%s in the window from %s", plural(v.Sends, "send"), held, instant(v.WindowStart))
}

// epochFloor: times from 2000 on are shown as UTC, earlier ones as seconds.
const epochFloor = 946684800 * int64(time.Second)

func instant(ns int64) string {
	if ns >= epochFloor {
		return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	// In integers: a float64 holds nanoseconds exactly only below 2^53
	// (104 days), and a log that counts from its own start may run longer.
	sign := ""
	u := uint64(ns)
	if ns < 0 {
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%09d s", sign, u/1e9, u%1e9)
}

// follower follows one path across rotations and truncations.
type follower struct {
	path    string
	f       *os.File
	fi      os.FileInfo
	off     int64
	partial []byte
	lines   *sendlog.Lines
	read    int64 // lines read, over every file at the path
	buf     []byte
}

func (f *follower) close() {
	if f.f != nil {
		f.f.Close()
		f.f = nil
	}
}

// open starts following the file now at the path, from its start.
func (f *follower) open(w *watcher) error {
	file, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // not yet there: look again at the next poll
	}
	if err != nil {
		return err
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return err
	}
	f.f, f.fi, f.off, f.partial = file, fi, 0, f.partial[:0]
	f.lines = sendlog.NewLines(f.path, w.cfg.Read)
	return nil
}

// poll reads what the file gained, then looks for a rotation or a
// truncation at the path.
func (f *follower) poll(w *watcher) error {
	if f.f == nil {
		if err := f.open(w); err != nil || f.f == nil {
			return err
		}
	}
	if err := f.drain(w); err != nil {
		return err
	}
	st, err := os.Stat(f.path)
	switch {
	case err != nil:
		return nil // renamed away and not yet replaced: the old file is read out
	case !os.SameFile(st, f.fi):
		if err := f.drain(w); err != nil { // lines written before the rename
			return err
		}
		if err := f.end(w); err != nil {
			return err
		}
		f.close()
		if err := f.open(w); err != nil || f.f == nil {
			return err
		}
		return f.drain(w)
	case st.Size() < f.off:
		if err := f.end(w); err != nil {
			return err
		}
		if _, err := f.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		f.off = 0
		f.lines = sendlog.NewLines(f.path, w.cfg.Read)
		return f.drain(w)
	}
	return nil
}

// drain reads the file to its current end, judging each complete line.
func (f *follower) drain(w *watcher) error {
	if f.buf == nil {
		f.buf = make([]byte, 64<<10)
	}
	for {
		n, err := f.f.Read(f.buf)
		f.off += int64(n)
		data := f.buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if len(f.partial)+len(data) > sendlog.MaxLine+2 {
					return &sendlog.InputError{File: f.path, Line: f.read + 1, Msg: fmt.Sprintf("line longer than %d bytes", sendlog.MaxLine)}
				}
				f.partial = append(f.partial, data...)
				break
			}
			line := data[:i]
			if len(f.partial) > 0 {
				f.partial = append(f.partial, line...)
				line = f.partial
			}
			if err := f.line(w, line); err != nil {
				return err
			}
			f.partial = f.partial[:0]
			data = data[i+1:]
		}
		if err == io.EOF || n == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// line judges one complete line.
func (f *follower) line(w *watcher, line []byte) error {
	f.read++
	w.sum.Lines++
	recs, err := f.lines.Parse(line)
	for _, rec := range recs {
		w.observe(f, rec)
	}
	return err
}

// end takes the file's last line, even without its newline, and the lines
// held to learn its layout.
func (f *follower) end(w *watcher) error {
	if f.lines == nil {
		return nil
	}
	if len(f.partial) > 0 {
		line := f.partial
		f.partial = f.partial[:0]
		if err := f.line(w, line); err != nil {
			return err
		}
	}
	recs, err := f.lines.Flush()
	for _, rec := range recs {
		w.observe(f, rec)
	}
	return err
}

// serveMetrics serves the metrics when asked to; stop shuts them down.
func (w *watcher) serveMetrics() (stop func(), err error) {
	ln := w.cfg.Listener
	if ln == nil {
		if w.cfg.Listen == "" {
			return func() {}, nil
		}
		if ln, err = net.Listen("tcp", w.cfg.Listen); err != nil {
			return nil, err
		}
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(collector{w})
	mux := http.NewServeMux()
	mux.Handle(w.cfg.MetricsPath, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	if w.cfg.ErrOut != nil {
		fmt.Fprintf(w.cfg.ErrOut, "rlcheck watch: metrics at http://%s%s\n", ln.Addr(), w.cfg.MetricsPath)
	}
	return func() { srv.Close() }, nil
}

var (
	linesDesc = prometheus.NewDesc("rlcheck_watch_lines_total", "Lines read from the file at each path.", []string{"file"}, nil)
	orderDesc = prometheus.NewDesc("rlcheck_watch_out_of_order_total", "Lines earlier than one read before them for their key, left out.", nil, nil)
)

// seriesOf returns label's series in m, adding it.
func (w *watcher) seriesOf(m map[string]*metrics.KeySeries, label string) *metrics.KeySeries {
	g := m[label]
	if g == nil {
		g = metrics.NewKeySeries(len(w.cfg.Rules))
		m[label] = g
	}
	return g
}

// collector reads each rule's usage at the newest send read, per key label
// when the lines are split per key (over the busiest key of the label),
// else over every key: the current window's and the peak; and the
// violations so far.
type collector struct{ w *watcher }

func (c collector) labels() []string {
	if c.w.cfg.Read.HasKey() {
		return []string{"key", "rule"}
	}
	return []string{"rule"}
}

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	metrics.UsageRatioVec(c.labels()...).Describe(ch)
	metrics.ViolationsVec(c.labels()...).Describe(ch)
	ch <- linesDesc
	ch <- orderDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	usage := metrics.UsageRatioVec(c.labels()...)
	viol := metrics.ViolationsVec(c.labels()...)
	snap := map[string]*metrics.KeySeries{}
	for label, g := range w.gone {
		w.seriesOf(snap, label).Merge(g)
	}
	for _, s := range w.keys {
		w.seriesOf(snap, s.label).Add(s.chk, func(i int) int64 { n, _ := s.chk.InWindow(i, w.newest); return n }, 0)
	}
	for label, g := range snap {
		for i, r := range w.cfg.Rules {
			l := []string{r.String()}
			if w.cfg.Read.HasKey() {
				l = []string{label, r.String()}
			}
			limit := float64(r.Limit)
			usage.WithLabelValues(append(l, "current")...).Set(float64(g.Current[i]) / limit)
			usage.WithLabelValues(append(l, "peak")...).Set(float64(g.Peak[i]) / limit)
			viol.WithLabelValues(l...).Add(float64(g.Violations[i]))
		}
	}
	usage.Collect(ch)
	viol.Collect(ch)
	for _, f := range w.files {
		ch <- prometheus.MustNewConstMetric(linesDesc, prometheus.CounterValue, float64(f.read), keytext.Show(f.path))
	}
	ch <- prometheus.MustNewConstMetric(orderDesc, prometheus.CounterValue, float64(w.sum.OutOfOrder))
}

// judge hands rec to chk: at its estimates until its settlement, when
// the log gives one, at its costs otherwise.
func (w *watcher) judge(chk *checker.Checker, rec sendlog.Record) error {
	n := len(w.units)
	if !w.cfg.Read.HasSettled() || rec.Settled == sendlog.NotSettled {
		return chk.ObserveCost(rec.At, rec.Line, rec.Cost[:n])
	}
	return chk.ObserveReserved(rec.At, rec.Line, rec.Cost[:n], &checker.Settlement{At: rec.Settled, Actual: rec.Actual[:n]})
}

package serve

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rlcheck/rlcheck/rlheader"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// LogHeader is the first line of the request log: send_ns and request_id
// are the client's X-Send-Time and X-Request-Id, empty when it sent none.
const LogHeader = "ts_ns,key,status,duration_ns,send_ns,request_id"

// When the rules meter costs, the log has one more column per unit, named
// as the unit, after request_id: the request's cost in it. Under a
// provider preset these are the estimates charged at arrival, and the log
// then has, per unit, UNIT_actual, the usage the answer reported, and
// settled_ns, the answer's instant, empty for a request never settled (a
// 429): the columns `rlcheck check --actual UNIT=UNIT_actual --settled-col
// settled_ns` reads (LogCheckConfig). With an
// upstream, the log then has the upstream's rate-limit headers, raw, one
// column each, named as infer reads them (AnswerColumns); with a provider
// preset, the headers the preset sent, in the same columns.

// MaxHeaderText bounds the text of one upstream header in the log: a
// longer one is cut to this many bytes (at a character boundary) and
// ends in "...".
const MaxHeaderText = 512

// AnswerColumns are the columns of the upstream's rate-limit headers in
// the log of a recording proxy, in order.
func AnswerColumns() []string {
	var out []string
	for h := range rlheader.NumHeaders {
		out = append(out, h.Col())
	}
	return out
}

// answerHeaders reads the upstream's rate-limit headers, each as sent (the
// values of a repeated one joined by ", "), cut to MaxHeaderText.
func answerHeaders(hd http.Header) *[rlheader.NumHeaders]string {
	var out [rlheader.NumHeaders]string
	for h := range rlheader.NumHeaders {
		v := strings.Join(hd.Values(h.HTTP()), ", ")
		if len(v) > MaxHeaderText {
			cut := MaxHeaderText - 3
			for cut > 0 && !utf8.RuneStart(v[cut]) {
				cut--
			}
			v = v[:cut] + "..."
		}
		out[h] = v
	}
	return &out
}

// headerByName finds a header infer reads by its HTTP name, lower case.
var headerByName = func() map[string]rlheader.Header {
	m := map[string]rlheader.Header{}
	for h := range rlheader.NumHeaders {
		m[strings.ToLower(h.HTTP())] = h
	}
	return m
}()

// presetAnswer is the rate-limit headers a preset sent with a's answer,
// as the log of a recording proxy holds an upstream's: the RateLimit
// fields, the provider's family and, on a 429, the waits.
func (s *Server) presetAnswer(a *arrival, retry [][2]string) *[rlheader.NumHeaders]string {
	var out [rlheader.NumHeaders]string
	if len(s.opt.Rules) > 0 {
		out[rlheader.HRateLimitPolicy], out[rlheader.HRateLimit] = s.policy[0], a.rateLimit
	}
	for _, set := range [][][2]string{a.family, retry} {
		for _, kv := range set {
			if h, ok := headerByName[kv[0]]; ok {
				out[h] = kv[1]
			}
		}
	}
	return &out
}

// LogReadOptions says how to read the request log, exactly as `rlcheck check
// --key-col key --duration-col duration_ns --duration-unit ns` does, the
// key column only when the server split its contract per key.
func LogReadOptions(perKey bool) sendlog.Options {
	o := sendlog.Options{
		Format: sendlog.FormatCSV, TimeCol: "ts_ns",
		DurationCol: "duration_ns", DurationUnit: sendlog.UnitNanos,
	}
	if perKey {
		o.KeyCol = "key"
	}
	return o
}

// LogReadOptionsFor is LogReadOptions for a server judging rules: the
// costs of the units they meter are read from their columns, as check
// reads them by default.
func LogReadOptionsFor(rules []rule.Rule, perKey bool) sendlog.Options {
	o := LogReadOptions(perKey)
	for _, u := range rule.Units(rules) {
		o.Costs = append(o.Costs, sendlog.CostSource{Unit: u, Col: u, Field: u})
	}
	return o
}

// LogCheckConfig is how serve's verdict is judged again on its log (read
// from it with LogReadOptionsFor): under rule.RefusedFree, by the status
// column too, so that a 429 takes nothing from any window, as `rlcheck
// check --status-col status --refused free` reads it; under a provider
// preset, with each request's usage and settlement too.
func LogCheckConfig(o Options, perKey bool) (sendlog.Options, rule.Refusals) {
	read := LogReadOptionsFor(o.Rules, perKey)
	if o.Refusals == rule.RefusedFree {
		read.StatusCol = "status"
	}
	if o.Provider != NoProvider && len(read.Costs) > 0 {
		read.SettledCol = SettledColumn
		for i := range read.Costs {
			read.Costs[i].ActualCol = ActualColumn(read.Costs[i].Unit)
		}
	}
	return read, o.Refusals
}

// logWriter writes the request log in arrival order: a request is recorded
// when it is answered, and held until every earlier arrival has been.
type logWriter struct {
	mu      sync.Mutex
	w       *bufio.Writer
	next    int64
	pending map[int64][]byte
	rows    int64
	err     error
	answers bool // the upstream's headers are logged
	settles bool // the usage and the settlement are logged
}

// SettledColumn is the column of a preset's log that holds each answer's
// instant, when the request was settled to the usage it reported.
const SettledColumn = "settled_ns"

// ActualColumn is the column of a preset's log that holds the usage an
// answer reported in unit.
func ActualColumn(unit string) string { return unit + "_actual" }

func newLogWriter(w io.Writer, units []string, answers, settles bool) *logWriter {
	l := &logWriter{pending: map[int64][]byte{}, answers: answers, settles: settles && len(units) > 0}
	if w != nil {
		l.w = bufio.NewWriterSize(w, 64<<10)
		l.w.WriteString(LogHeader)
		for _, u := range units {
			l.w.WriteString("," + u)
		}
		if l.settles {
			for _, u := range units {
				l.w.WriteString("," + ActualColumn(u))
			}
			l.w.WriteString("," + SettledColumn)
		}
		if answers {
			l.w.WriteString("," + strings.Join(AnswerColumns(), ","))
		}
		l.w.WriteString("\n")
	}
	return l
}

// put records arrival a; its line is written once those before it are.
func (l *logWriter) put(a *arrival, status int, dur int64) {
	seq, at, key := a.seq, a.at, a.k.name
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		l.rows++
		return
	}
	row := strconv.AppendInt(make([]byte, 0, 48+len(key)), at, 10)
	row = append(row, ',')
	row = appendCSV(row, key)
	row = append(row, ',')
	row = strconv.AppendInt(row, int64(status), 10)
	row = append(row, ',')
	row = strconv.AppendInt(row, dur, 10)
	row = append(row, ',')
	if a.sent {
		row = strconv.AppendInt(row, a.send, 10)
	}
	row = append(row, ',')
	row = appendCSV(row, a.id)
	for _, c := range a.costs {
		row = append(row, ',')
		row = strconv.AppendInt(row, c, 10)
	}
	if l.settles {
		row = appendSettlement(row, a, len(a.costs))
	}
	if l.answers {
		for h := range rlheader.NumHeaders {
			row = append(row, ',')
			if a.answer != nil {
				row = appendCSV(row, a.answer[h])
			}
		}
	}
	row = append(row, '\n')
	if seq != l.next {
		l.pending[seq] = row
		return
	}
	l.write(row)
	for {
		r, ok := l.pending[l.next]
		if !ok {
			return
		}
		delete(l.pending, l.next)
		l.write(r)
	}
}

func (l *logWriter) write(row []byte) {
	if _, err := l.w.Write(row); err != nil && l.err == nil {
		l.err = err
	}
	l.next++
	l.rows++
}

// appendSettlement appends a's usage in each of its n units and its
// settlement's instant, or as many empty fields when it was not settled.
func appendSettlement(row []byte, a *arrival, n int) []byte {
	for k := range n {
		row = append(row, ',')
		if a.actual != nil {
			row = strconv.AppendInt(row, a.actual[k], 10)
		}
	}
	row = append(row, ',')
	if a.actual != nil {
		row = strconv.AppendInt(row, a.settled, 10)
	}
	return row
}

// appendCSV appends a CSV field, quoted when it must be.
func appendCSV(b []byte, s string) []byte {
	if s == "" || !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// flush writes out what is buffered, for readers of a log still growing.
func (l *logWriter) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

// close flushes the log; every request must have been answered.
func (l *logWriter) close() error {
	if err := l.flush(); err != nil {
		return err
	}
	if n := len(l.pending); n > 0 {
		return io.ErrShortWrite
	}
	return nil
}

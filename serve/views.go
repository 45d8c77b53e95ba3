package serve

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/rule"
)

// The headers a client may send so that serve judges each request at its
// send instant as well as at its arrival.
const (
	// SendTimeHeader carries the instant the client sent the request:
	// integer epoch nanoseconds, or decimal epoch seconds with a point
	// (1700000000.123456789).
	SendTimeHeader = "X-Send-Time"
	// RequestIDHeader names the request in the log and the report.
	RequestIDHeader = "X-Request-Id"
)

// parseSendTime reads an X-Send-Time value; ok is false for none or one
// that does not parse.
func parseSendTime(v string) (ns int64, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	whole, frac, dot := strings.Cut(v, ".")
	if !dot {
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && n >= 0
	}
	if len(frac) > 9 || whole == "" || strings.HasPrefix(whole, "-") || strings.HasPrefix(frac, "-") || strings.HasPrefix(frac, "+") {
		return 0, false
	}
	s, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	if err1 != nil || err2 != nil || s > (1<<63-1-f)/int64(time.Second) {
		return 0, false
	}
	return s*int64(time.Second) + f, true
}

// Views compares the two places a request can be judged: at the client's
// send instant (X-Send-Time) and at its arrival, where serve judges it.
type Views struct {
	// Requests is every request in the log; Sent those that carried a send
	// instant.
	Requests, Sent int64
	// The delays from send to arrival over the requests that carried one:
	// the median, the 95th percentile, the least and the most, and the
	// spread (Max - Min), which is the margin a limiter keeping its windows
	// W + m wide at send needs to keep them W wide at arrival.
	P50, P95, Min, Max, Spread time.Duration
	// Absurd counts the send instants left out for lying more than
	// MaxSendSkew from their arrivals (year 2262, or 1970): no path delay or
	// disagreement of clocks is that large, and one such instant would
	// swamp the delays and overflow their spread.
	Absurd int64
	// AtArrival and AtSend count the requests that overfilled a window of
	// some rule, judged at arrival and at send; the send view is judged
	// only when every request carried its send instant.
	AtArrival, AtSend int64
	Judged            bool
	// CleanAtSend counts the requests that broke a window at arrival and
	// none at send; IDs names the first few (their X-Request-Id, or their
	// log line).
	CleanAtSend int64
	IDs         []string
}

// viewRow is one logged request, as Views needs it.
type viewRow struct {
	key      string
	at, send int64
	sent     bool
	id       string
}

// maxViewIDs bounds the requests Views names.
const maxViewIDs = 5

// MaxSendSkew is how far a send instant may lie from its arrival, either
// way, and count: a day covers any path delay and a client clock off by
// a time zone, and keeps every delay and their spread far within int64.
const MaxSendSkew = 24 * time.Hour

// plausible reports whether send lies within MaxSendSkew of at; the
// difference is taken in uint64, where it cannot overflow.
func plausible(at, send int64) bool {
	d := uint64(at) - uint64(send)
	if at < send {
		d = uint64(send) - uint64(at)
	}
	return d <= uint64(MaxSendSkew)
}

// BothViews reads a request log written by serve and compares the
// requests' send instants with their arrivals, per key when perKey. It
// holds every logged request (about 40 bytes and its key a request), and
// returns nil when no request carried a send instant.
func BothViews(log io.Reader, rules []rule.Rule, b rule.Boundary, perKey bool) (*Views, error) {
	r := csv.NewReader(log)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil || len(head) < 6 || strings.Join(head[:6], ",") != LogHeader {
		return nil, fmt.Errorf("serve: not a request log: %v", head)
	}
	var rows []viewRow
	v := &Views{}
	for line := int64(2); ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || len(rec) != len(head) {
			return nil, fmt.Errorf("serve: request log line %d: %v", line, err)
		}
		row, err := v.row(rec, line, perKey)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	v.Requests = int64(len(rows))
	if v.Sent == 0 {
		if v.Absurd > 0 {
			return v, nil
		}
		return nil, nil
	}
	v.delays(rows)
	arrival := brokenBy(rows, rules, b, func(r viewRow) int64 { return r.at })
	v.AtArrival = int64(len(arrival))
	if v.Judged = v.Sent == v.Requests; !v.Judged {
		return v, nil
	}
	send := brokenBy(rows, rules, b, func(r viewRow) int64 { return r.send })
	v.AtSend = int64(len(send))
	for _, i := range arrival {
		if _, ok := slices.BinarySearch(send, i); ok {
			continue
		}
		v.CleanAtSend++
		if len(v.IDs) < maxViewIDs {
			v.IDs = append(v.IDs, keytext.Show(rows[i].id))
		}
	}
	return v, nil
}

// row reads log line line, counting its send instant in v: Sent when it
// carried one, Absurd when that one lies too far from its arrival.
func (v *Views) row(rec []string, line int64, perKey bool) (viewRow, error) {
	row := viewRow{id: rec[5]}
	if perKey {
		row.key = rec[1]
	}
	var err error
	if row.at, err = strconv.ParseInt(rec[0], 10, 64); err != nil {
		return row, fmt.Errorf("serve: request log line %d: %w", line, err)
	}
	if rec[4] != "" {
		row.send, row.sent = parseSendTime(rec[4])
		if row.sent && !plausible(row.at, row.send) {
			row.sent = false
			v.Absurd++
		}
	}
	if row.id == "" {
		row.id = "line " + strconv.FormatInt(line, 10)
	}
	if row.sent {
		v.Sent++
	}
	return row, nil
}

// delays fills the delay figures from the rows that carry a send instant.
func (v *Views) delays(rows []viewRow) {
	var d []int64
	for _, r := range rows {
		if r.sent {
			d = append(d, r.at-r.send)
		}
	}
	slices.Sort(d)
	rank := func(q float64) time.Duration { // nearest rank
		i := int(q*float64(len(d))+0.999999999) - 1
		return time.Duration(d[min(max(i, 0), len(d)-1)])
	}
	v.P50, v.P95 = rank(0.50), rank(0.95)
	v.Min, v.Max = time.Duration(d[0]), time.Duration(d[len(d)-1])
	v.Spread = v.Max - v.Min
}

// brokenBy returns, in ascending order, the rows that overfill a window
// of some rule when each key's requests are judged in the order of the
// instant that at gives (ties in log order).
func brokenBy(rows []viewRow, rules []rule.Rule, b rule.Boundary, at func(viewRow) int64) []int {
	byKey := map[string][]int{}
	for i, r := range rows {
		byKey[r.key] = append(byKey[r.key], i)
	}
	var out []int
	for _, idx := range byKey {
		slices.SortStableFunc(idx, func(x, y int) int { return cmpInt64(at(rows[x]), at(rows[y])) })
		chk := checker.New(checker.Config{Rules: rules, Boundary: b, OnViolation: func(_ int, v checker.Violation) {
			out = append(out, int(v.Send.Ref))
		}})
		for _, i := range idx {
			_ = chk.Observe(at(rows[i]), int64(i)) // in order: sorted above
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Write prints the comparison for a reader of the report. Delays below
// zero mean that the client's clock runs ahead of serve's; only their
// spread matters, so they are then given from the least, never as
// negative delays.
func (v *Views) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nsend instants (%s) on %d of %d requests", SendTimeHeader, v.Sent, v.Requests)
	if v.Absurd > 0 {
		fmt.Fprintf(&b, " (%s more than %v from %s left out)", plural(v.Absurd, "send instant"), MaxSendSkew, map[bool]string{true: "its arrival", false: "their arrivals"}[v.Absurd == 1])
	}
	if v.Sent == 0 {
		b.WriteString("\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	shift, from := time.Duration(0), "delay to arrival"
	if v.Min < 0 {
		shift = -v.Min
		from = fmt.Sprintf("the client's clock runs ahead of serve's (send instants up to %v after their arrivals), so the delays are given from the least:", shift)
	}
	fmt.Fprintf(&b, ": %s p50 %v, p95 %v, max %v; spread (max - min) %v\n", from, v.P50+shift, v.P95+shift, v.Max+shift, v.Spread)
	switch {
	case !v.Judged:
		b.WriteString("not judged at send: some requests carried no send instant\n")
	case v.CleanAtSend == 0:
		fmt.Fprintf(&b, "judged at send: %s a window, at arrival %d; none broke one at arrival only\n", brokeWords(v.AtSend), v.AtArrival)
	default:
		fmt.Fprintf(&b, "judged at send: %s a window, at arrival %d; %d broke one at arrival and none at send (%s):\n",
			brokeWords(v.AtSend), v.AtArrival, v.CleanAtSend, strings.Join(v.IDs, ", "))
		fmt.Fprintf(&b, "the path's delays overfilled windows the client kept. A limiter margin of %v or more (max(d) - min(d)) would have covered them.\n", v.Spread)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// brokeWords is "1 request broke" or "2 requests broke".
func brokeWords(n int64) string { return plural(n, "request") + " broke" }

// plural writes "1 request" or "2 requests".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

package infer

import (
	"fmt"
	"github.com/rlcheck/rlcheck/rlheader"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// writeHeaders sets the announced limits beside the calls.
func writeHeaders(b *strings.Builder, res *Result) {
	h := res.Headers
	if h == nil {
		return
	}
	fmt.Fprintf(b, "\nRate-limit headers on %d of %d answers", h.Answers, res.Sends)
	if len(h.Announced) == 0 {
		b.WriteString(": no limit announced.\n")
	} else {
		b.WriteString(". Announced:\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LIMIT\tWINDOW\tUNIT\tHEADER\tANSWERS\tFIRST LINE")
		for _, a := range h.Announced {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\n", a.N, windowText(a.Window), unitText(a.Unit), a.From.HTTP(), a.Answers, a.FirstLine)
		}
		tw.Flush()
	}
	if len(h.Added) > 0 {
		fmt.Fprintf(b, "Windows the headers name, added to the grid: %s.\n", windowsText(h.Added))
	}
	if h.RetryAfters > 0 {
		fmt.Fprintf(b, "Retry-After on %s, from %v to %v.\n", plural(h.RetryAfters, "answer"), h.RetryMin, h.RetryMax)
	}
	fmt.Fprintf(b, "Headers against behaviour, under the reading \"%s\":\n", h.Reading)
	fmt.Fprintf(b, "  refused while announcing remaining > 0: %s\n", countLine(h.RoomRefused, "call", h.RoomRefusedLine))
	for i := 0; i+1 < len(h.Past); i += 2 {
		// Per announced limit: sliding, then fixed.
		s, f := h.Past[i], h.Past[i+1]
		fmt.Fprintf(b, "  accepted past %s: %s in its sliding window, %s in its fixed window\n",
			s.Rule, countLine(s.Accepted, "call", s.FirstLine), countLine(f.Accepted, "call", f.FirstLine))
	}
}

func countLine(n int, what string, line int64) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%s (the first on line %d)", plural(n, what), line)
}

func windowText(w time.Duration) string {
	if w <= 0 {
		return "-"
	}
	return rule.FormatWindow(w)
}

func unitText(u string) string {
	if u == "" {
		return "calls"
	}
	return u
}

func windowsText(ws []time.Duration) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = rule.FormatWindow(w)
	}
	return strings.Join(s, ", ")
}

// writeBadHeaders names the headers left out because they did not parse.
func writeBadHeaders(b *strings.Builder, log *Log) {
	sep := "\n"
	for h, c := range log.BadHeaders {
		if c.N > 0 {
			fmt.Fprintf(b, "%s%s left out, the first on line %d: %s: %s\n", sep, plural(c.N, "malformed "+Header(h).HTTP()+" header"),
				c.Line, shortText(c.Text), c.Err)
			sep = ""
		}
	}
}

func shortText(s string) string { return rlheader.Quote(s) }

type jsonHeaderOut struct {
	Answers     int            `json:"answers"`
	Announced   []jsonAnnounce `json:"announced"`
	Added       []string       `json:"windows_added"`
	RetryAfters int            `json:"retry_afters"`
	RetryMinNs  int64          `json:"retry_after_min_ns"`
	RetryMaxNs  int64          `json:"retry_after_max_ns"`
	Reading     string         `json:"reading"`
	RoomRefused int            `json:"refused_with_remaining"`
	RoomLine    int64          `json:"first_refused_with_remaining_line,omitempty"`
	Past        []jsonPast     `json:"accepted_past_limit"`
}

type jsonAnnounce struct {
	Limit     int64  `json:"limit"`
	WindowNs  int64  `json:"window_ns"` // 0: no window named
	Unit      string `json:"unit"`
	Header    string `json:"header"`
	Answers   int    `json:"answers"`
	FirstLine int64  `json:"first_line"`
}

type jsonPast struct {
	Rule      string `json:"rule"`
	Accepted  int    `json:"accepted"`
	FirstLine int64  `json:"first_line,omitempty"`
}

type jsonBad struct {
	Header    string `json:"header"`
	Count     int    `json:"count"`
	FirstLine int64  `json:"first_line"`
	Text      string `json:"text"`
	Error     string `json:"error"`
}

func jsonHeadersOf(h *Headers) *jsonHeaderOut {
	if h == nil {
		return nil
	}
	out := &jsonHeaderOut{
		Answers: h.Answers, Announced: []jsonAnnounce{}, Added: []string{}, RetryAfters: h.RetryAfters,
		RetryMinNs: int64(h.RetryMin), RetryMaxNs: int64(h.RetryMax), Reading: h.Reading.String(),
		RoomRefused: h.RoomRefused, RoomLine: h.RoomRefusedLine, Past: []jsonPast{},
	}
	for _, a := range h.Announced {
		out.Announced = append(out.Announced, jsonAnnounce{a.N, int64(a.Window), unitText(a.Unit), a.From.HTTP(), a.Answers, a.FirstLine})
	}
	for _, w := range h.Added {
		out.Added = append(out.Added, rule.FormatWindow(w))
	}
	for _, p := range h.Past {
		out.Past = append(out.Past, jsonPast{p.Rule.String(), p.Accepted, p.FirstLine})
	}
	return out
}

func jsonBadHeaders(log *Log) []jsonBad {
	var out []jsonBad
	for h, c := range log.BadHeaders {
		if c.N > 0 {
			out = append(out, jsonBad{Header(h).HTTP(), c.N, c.Line, c.Text, c.Err})
		}
	}
	return out
}

package infer

import (
	"strings"
	"unicode"

	"github.com/rlcheck/rlcheck/rlheader"
	"github.com/rlcheck/rlcheck/sendlog"
)

// BadHeaders counts the headers of one kind that did not parse: they are
// left out, the first named by its line, text and error.
type BadHeaders struct {
	N    int
	Line int64
	Text string
	Err  string
}

// headerSources are where each rate-limit header is read: its default
// column or field (Header.Col), or the one opt names ("": none), in
// Header order.
func headerSources(opt ReadOptions) []sendlog.TextSource {
	out := make([]sendlog.TextSource, NumHeaders)
	for h := range NumHeaders {
		out[h] = sendlog.TextSource{Col: h.Col(), Field: h.Col()}
		if c, ok := opt.HeaderCols[h]; ok {
			out[h].Col = c
		}
		if f, ok := opt.HeaderFields[h]; ok {
			out[h].Field = f
		}
	}
	return out
}

// answer parses the rate-limit headers a call's record carries into its
// Ann, counting the answer and the headers that did not parse in log.
func (c *answerCache) answer(s *Send, texts []string, log *Log) {
	var raw [NumHeaders]string
	found := false
	for h, t := range texts {
		if t != "" {
			raw[h], found = t, true
		}
	}
	if !found {
		return
	}
	a, bad := c.parse(&raw, s.At)
	s.Ann = a
	log.Answers++
	for _, b := range bad {
		n := &log.BadHeaders[b.Header]
		if n.N++; n.N == 1 {
			n.Line, n.Text, n.Err = s.Line, b.Text, b.Err.Error()
		}
	}
}

// answerCache shares the parse of answers whose headers are the same
// text: most answers repeat a few, and each call then holds a pointer.
type answerCache struct {
	m map[[NumHeaders]string]parsedAnswer
}

type parsedAnswer struct {
	a   *Announced
	bad []BadHeader
}

// maxCachedAnswers bounds the distinct answers the cache holds; later
// ones are parsed each time.
const maxCachedAnswers = 1 << 14

func (c *answerCache) parse(raw *[NumHeaders]string, at int64) (*Announced, []BadHeader) {
	if strings.ContainsFunc(raw[rlheader.HRetryAfter], unicode.IsLetter) {
		return rlheader.ParseAnswer(raw, at) // an HTTP date: the wait depends on the call's time
	}
	if p, ok := c.m[*raw]; ok {
		return p.a, p.bad
	}
	a, bad := rlheader.ParseAnswer(raw, at)
	if len(c.m) < maxCachedAnswers {
		c.m[*raw] = parsedAnswer{a, bad}
	}
	return a, bad
}

package infer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/rlcheck/rlcheck/rlheader"
	"io"
	"strconv"
	"strings"
	"unicode"

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

// headerSource is where each header is read: a CSV column (-1: none) or a
// JSON-lines path (nil: none).
type headerSource struct {
	cols  [NumHeaders]int
	paths [NumHeaders][]string
}

// readHeaders reads the rate-limit headers of the calls in all (in file
// order) and parses each call's into its Ann; a log without any header
// column or field is left as it is.
func readHeaders(name string, open Open, format sendlog.Format, opt ReadOptions, all []Send, log *Log) error {
	in, err := open()
	if err != nil {
		return err
	}
	if c, ok := in.(io.Closer); ok {
		defer c.Close()
	}
	br := bufio.NewReader(in)
	if b, _ := br.Peek(3); string(b) == "\ufeff" {
		br.Discard(3)
	}
	j := 0
	cache := answerCache{m: map[[NumHeaders]string]parsedAnswer{}}
	attach := func(line int64, raw *[NumHeaders]string) {
		for j < len(all) && all[j].Line < line {
			j++
		}
		if j == len(all) || all[j].Line != line {
			return
		}
		a, bad := cache.parse(raw, all[j].At)
		all[j].Ann = a
		log.Answers++
		for _, b := range bad {
			c := &log.BadHeaders[b.Header]
			if c.N++; c.N == 1 {
				c.Line, c.Text, c.Err = line, b.Text, b.Err.Error()
			}
		}
	}
	if format == sendlog.FormatJSONL {
		return jsonHeaders(name, br, opt, attach)
	}
	return csvHeaders(name, br, opt, attach)
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

// csvHeaders reads the header columns of a CSV log, named in its header
// line or by index; a first line that is a call (no header) is read too.
func csvHeaders(name string, in io.Reader, opt ReadOptions, attach func(int64, *[NumHeaders]string)) error {
	r := csv.NewReader(in)
	r.FieldsPerRecord, r.LazyQuotes, r.Comment = -1, true, '#'
	rec, err := r.Read()
	if err != nil {
		return nil // the first pass read the file; a file of a header only has no calls
	}
	cols, any := headerCols(rec, opt.HeaderCols)
	if !any {
		return nil
	}
	for {
		line, _ := r.FieldPos(0)
		var raw [NumHeaders]string
		found := false
		for h, c := range cols {
			if c >= 0 && c < len(rec) && strings.TrimSpace(rec[c]) != "" {
				raw[h], found = rec[c], true
			}
		}
		if found {
			attach(int64(line), &raw) // which reads only the lines of calls
		}
		rec, err = r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			line, _ := r.FieldPos(0)
			return &sendlog.InputError{File: name, Line: int64(line), Msg: "reading the headers: " + err.Error()}
		}
	}
}

// headerCols finds each header's column: named in over (a header name or
// a 1-based index), else by its default name.
func headerCols(head []string, over map[Header]string) (cols [NumHeaders]int, any bool) {
	for h := range NumHeaders {
		want := h.Col()
		if o, ok := over[h]; ok {
			want = o
		}
		cols[h] = -1
		if n, err := strconv.Atoi(want); err == nil && n >= 1 && n <= len(head) {
			cols[h] = n - 1
		}
		for i, c := range head {
			if cols[h] < 0 && strings.EqualFold(strings.TrimSpace(c), want) {
				cols[h] = i
			}
		}
		any = any || cols[h] >= 0
	}
	return cols, any
}

// jsonHeaders reads the header fields of a JSON-lines log.
func jsonHeaders(name string, in io.Reader, opt ReadOptions, attach func(int64, *[NumHeaders]string)) error {
	var paths [NumHeaders][]string
	var probes [][]byte
	for h := range NumHeaders {
		f := h.Col()
		if o, ok := opt.HeaderFields[h]; ok {
			f = o
		}
		if f != "" {
			paths[h] = strings.Split(f, ".")
			probes = append(probes, []byte(`"`+paths[h][len(paths[h])-1]+`"`))
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), sendlog.MaxLine+2)
	for line := int64(1); sc.Scan(); line++ {
		b := sc.Bytes()
		if !containsAny(b, probes) {
			continue
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if d.Decode(&m) != nil {
			continue // the first pass judged the line
		}
		var raw [NumHeaders]string
		found := false
		for h := range NumHeaders {
			if v, ok := lookup(m, paths[h]); ok {
				raw[h], found = fieldText(v), true
			}
		}
		if found {
			attach(line, &raw)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: reading the headers: %w", name, err)
	}
	return nil
}

func containsAny(b []byte, probes [][]byte) bool {
	for _, p := range probes {
		if bytes.Contains(b, p) {
			return true
		}
	}
	return false
}

func lookup(m map[string]any, path []string) (any, bool) {
	if len(path) == 0 {
		return nil, false
	}
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[p]; !ok || v == nil {
			return nil, false
		}
	}
	return v, true
}

// fieldText gives a field's text as a header would carry it: a list's
// members joined by commas.
func fieldText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case []any:
		parts := make([]string, len(v))
		for i, p := range v {
			parts[i] = fieldText(p)
		}
		return strings.Join(parts, ", ")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

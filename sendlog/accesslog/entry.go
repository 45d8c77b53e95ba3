package accesslog

import (
	"bytes"
	"fmt"
	"strconv"
)

// Format is an access-log layout.
type Format int

const (
	// Nginx is the combined format followed by " $msec $request_time".
	Nginx Format = iota + 1
	// Apache is the combined format followed by " %{msec}t %D".
	Apache
)

func (f Format) String() string {
	switch f {
	case Nginx:
		return "nginx"
	case Apache:
		return "apache"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// ParseFormat reads "nginx" or "apache" ("httpd" too).
func ParseFormat(s string) (Format, error) {
	switch s {
	case "nginx":
		return Nginx, nil
	case "apache", "httpd", "apache2":
		return Apache, nil
	}
	return 0, fmt.Errorf("accesslog: format %q: want nginx or apache", s)
}

// Entry is one request read from an access log. Method and Path point into
// the parsed line and are valid only as long as it is.
type Entry struct {
	// Start and End are when the request was received and finished, in
	// nanoseconds since the Unix epoch; the call occupies [Start, End).
	Start, End int64
	// Method is the request method as written ("GET"); Path is the request
	// target without its query string ("/api/items"). Both are empty when
	// the request line is not "METHOD TARGET [PROTOCOL]" (nginx writes "-"
	// for a connection that sent no request).
	Method, Path []byte
	Status       int
}

// Error is a line that does not have the expected layout.
type Error struct {
	Format Format
	Field  string // the field that is wrong, as the log_format names it
	Text   string // the offending text, when there is one
	Msg    string
}

func (e *Error) Error() string {
	s := "accesslog: " + e.Format.String() + " " + e.Field + ": " + e.Msg
	if e.Text != "" {
		s += ": " + strconv.Quote(shorten(e.Text))
	}
	return s
}

func shorten(s string) string {
	const max = 60
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// Parse reads one line of format f.
func Parse(f Format, line []byte) (Entry, error) {
	switch f {
	case Nginx:
		return ParseNginx(line)
	case Apache:
		return ParseApache(line)
	}
	return Entry{}, fmt.Errorf("accesslog: unknown format %d", int(f))
}

// ParseNginx reads a line written with the documented nginx log_format.
func ParseNginx(line []byte) (Entry, error) {
	e, t1, t2, err := parseCombined(Nginx, line)
	if err != nil {
		return Entry{}, err
	}
	end, ok := parseDecimal(t1)
	if !ok {
		return Entry{}, &Error{Format: Nginx, Field: "$msec", Text: string(t1), Msg: "want seconds since the epoch such as 1732945800.123"}
	}
	took, ok := parseDecimal(t2)
	if !ok {
		return Entry{}, &Error{Format: Nginx, Field: "$request_time", Text: string(t2), Msg: "want seconds such as 0.045"}
	}
	if took > end {
		return Entry{}, &Error{Format: Nginx, Field: "$request_time", Text: string(t2), Msg: "longer than the time since the epoch"}
	}
	e.Start, e.End = end-took, end
	return e, nil
}

// ParseApache reads a line written with the documented Apache LogFormat.
func ParseApache(line []byte) (Entry, error) {
	e, t1, t2, err := parseCombined(Apache, line)
	if err != nil {
		return Entry{}, err
	}
	ms, ok := parseUint(t1)
	if !ok || ms > maxInt64/1_000_000 {
		return Entry{}, &Error{Format: Apache, Field: "%{msec}t", Text: string(t1), Msg: "want milliseconds since the epoch such as 1732945800123"}
	}
	us, ok := parseUint(t2)
	if !ok || us > maxInt64/1_000 {
		return Entry{}, &Error{Format: Apache, Field: "%D", Text: string(t2), Msg: "want microseconds such as 45123"}
	}
	start, took := ms*1e6, us*1e3
	if took > maxInt64-start {
		return Entry{}, &Error{Format: Apache, Field: "%D", Text: string(t2), Msg: "ends after the year 2262"}
	}
	e.Start, e.End = start, start+took
	return e, nil
}

// parseCombined reads the combined format's fields up to the response size,
// and returns the line's last two fields, which carry the times.
func parseCombined(f Format, line []byte) (e Entry, t1, t2 []byte, err error) {
	for len(line) > 0 && (line[len(line)-1] == ' ' || line[len(line)-1] == '\t' || line[len(line)-1] == '\r' || line[len(line)-1] == '\n') {
		line = line[:len(line)-1]
	}
	open := bytes.IndexByte(line, '[')
	if open <= 0 {
		return e, nil, nil, &Error{Format: f, Field: timeField(f), Text: string(line), Msg: "no [time] after the client address"}
	}
	shut := bytes.IndexByte(line[open:], ']')
	if shut < 0 {
		return e, nil, nil, &Error{Format: f, Field: timeField(f), Text: string(line[open:]), Msg: "no closing ]"}
	}
	rest := line[open+shut+1:]
	if len(rest) < 2 || rest[0] != ' ' || rest[1] != '"' {
		return e, nil, nil, &Error{Format: f, Field: requestField(f), Text: string(rest), Msg: "want a quoted request line after the time"}
	}
	req, n, ok := quoted(rest[1:])
	if !ok {
		return e, nil, nil, &Error{Format: f, Field: requestField(f), Text: string(rest[1:]), Msg: "no closing quote"}
	}
	rest = rest[1+n:]
	e.Method, e.Path = splitRequest(req)

	status, rest := field(rest)
	if len(status) != 3 || !isDigits(status) {
		return e, nil, nil, &Error{Format: f, Field: statusField(f), Text: string(status), Msg: "want a three-digit status"}
	}
	e.Status = int(status[0]-'0')*100 + int(status[1]-'0')*10 + int(status[2]-'0')
	size, rest := field(rest)
	if len(size) == 0 || !(isDigits(size) || string(size) == "-") {
		return e, nil, nil, &Error{Format: f, Field: sizeField(f), Text: string(size), Msg: "want a byte count or -"}
	}

	// The times are the last two fields, so referer and user agent may hold
	// anything, spaces included.
	sp := bytes.LastIndexByte(rest, ' ')
	if sp < 0 {
		return e, nil, nil, &Error{Format: f, Field: timesField(f), Msg: "missing at the end of the line: " + formatHint(f)}
	}
	t2 = rest[sp+1:]
	head := rest[:sp]
	sp = bytes.LastIndexByte(head, ' ')
	if sp < 0 {
		return e, nil, nil, &Error{Format: f, Field: timesField(f), Text: string(t2), Msg: "want two fields at the end of the line: " + formatHint(f)}
	}
	t1 = head[sp+1:]
	if !numeric(t1) || !numeric(t2) {
		return e, nil, nil, &Error{Format: f, Field: timesField(f), Text: string(t1) + " " + string(t2), Msg: "not numbers at the end of the line: " + formatHint(f)}
	}
	return e, t1, t2, nil
}

// quoted reads a double-quoted string at the start of b, honouring
// backslash escapes, and returns its content and the bytes consumed.
func quoted(b []byte) (content []byte, n int, ok bool) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return b[1:i], i + 1, true
		}
	}
	return nil, 0, false
}

// field reads one space-led field.
func field(b []byte) (f, rest []byte) {
	if len(b) == 0 || b[0] != ' ' {
		return nil, b
	}
	b = b[1:]
	i := bytes.IndexByte(b, ' ')
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i:]
}

// splitRequest reads "METHOD TARGET [PROTOCOL]" into method and path.
func splitRequest(req []byte) (method, path []byte) {
	sp := bytes.IndexByte(req, ' ')
	if sp <= 0 {
		return nil, nil
	}
	method, target := req[:sp], req[sp+1:]
	if sp = bytes.IndexByte(target, ' '); sp >= 0 {
		target = target[:sp]
	}
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		target = target[:q]
	}
	if len(target) == 0 {
		return nil, nil
	}
	return method, target
}

func timeField(f Format) string {
	if f == Apache {
		return "%t"
	}
	return "$time_local"
}

func requestField(f Format) string {
	if f == Apache {
		return "%r"
	}
	return "$request"
}

func statusField(f Format) string {
	if f == Apache {
		return "%>s"
	}
	return "$status"
}

func sizeField(f Format) string {
	if f == Apache {
		return "%b"
	}
	return "$body_bytes_sent"
}

func timesField(f Format) string {
	if f == Apache {
		return "%{msec}t %D"
	}
	return "$msec $request_time"
}

func formatHint(f Format) string {
	if f == Apache {
		return `use LogFormat "... \"%{User-Agent}i\" %{msec}t %D"`
	}
	return `use log_format '... "$http_user_agent" $msec $request_time'`
}

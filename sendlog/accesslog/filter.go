package accesslog

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"unsafe"
)

// FilterSpec says which requests to keep. Each list keeps a request that
// matches any of its items; a request must pass every non-empty list.
type FilterSpec struct {
	// Paths are prefixes ("/api/"), or path.Match globs when they hold
	// *, ? or [ ("/api/*/items"). They match the path without its query.
	Paths []string
	// Methods match case-insensitively ("get", "POST").
	Methods []string
	// Statuses are exact codes ("429") or classes ("2xx").
	Statuses []string
}

// Filter is a compiled FilterSpec. A nil *Filter keeps every request. It is
// safe for concurrent use.
type Filter struct {
	prefixes [][]byte
	globs    []string
	methods  [][]byte
	codes    []int
	classes  [10]bool
	status   bool // some status filter is set
}

// NewFilter compiles spec, refusing malformed globs and statuses.
func NewFilter(spec FilterSpec) (*Filter, error) {
	f := &Filter{}
	for _, p := range spec.Paths {
		if p == "" {
			return nil, fmt.Errorf("accesslog: empty path filter")
		}
		if strings.ContainsAny(p, "*?[") {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("accesslog: path filter %q: %v", p, err)
			}
			f.globs = append(f.globs, p)
		} else {
			f.prefixes = append(f.prefixes, []byte(p))
		}
	}
	for _, m := range spec.Methods {
		if m == "" || strings.ContainsAny(m, " \t") {
			return nil, fmt.Errorf("accesslog: method filter %q: want a method such as GET", m)
		}
		f.methods = append(f.methods, []byte(m))
	}
	for _, s := range spec.Statuses {
		switch {
		case len(s) == 3 && isDigits([]byte(s)):
			f.codes = append(f.codes, int(s[0]-'0')*100+int(s[1]-'0')*10+int(s[2]-'0'))
		case len(s) == 3 && s[0] >= '1' && s[0] <= '9' && strings.EqualFold(s[1:], "xx"):
			f.classes[s[0]-'0'] = true
		default:
			return nil, fmt.Errorf("accesslog: status filter %q: want a code such as 429 or a class such as 2xx", s)
		}
		f.status = true
	}
	return f, nil
}

// Match reports whether f keeps e.
func (f *Filter) Match(e *Entry) bool {
	if f == nil {
		return true
	}
	if f.status && !f.matchStatus(e.Status) {
		return false
	}
	if len(f.methods) > 0 && !f.matchMethod(e.Method) {
		return false
	}
	if len(f.prefixes)+len(f.globs) > 0 && !f.matchPath(e.Path) {
		return false
	}
	return true
}

// KeepStatus reports whether f keeps a request of status s, whatever its
// path and method: for logs that give a status and nothing else f filters.
func (f *Filter) KeepStatus(s int) bool {
	return f == nil || !f.status || f.matchStatus(s)
}

func (f *Filter) matchStatus(s int) bool {
	if s >= 100 && s <= 999 && f.classes[s/100] {
		return true
	}
	for _, c := range f.codes {
		if c == s {
			return true
		}
	}
	return false
}

func (f *Filter) matchMethod(m []byte) bool {
	for _, want := range f.methods {
		if bytes.EqualFold(m, want) {
			return true
		}
	}
	return false
}

func (f *Filter) matchPath(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	for _, pre := range f.prefixes {
		if bytes.HasPrefix(p, pre) {
			return true
		}
	}
	// path.Match keeps nothing, so a string view of the line saves a copy.
	s := unsafe.String(unsafe.SliceData(p), len(p))
	for _, g := range f.globs {
		if ok, _ := path.Match(g, s); ok {
			return true
		}
	}
	return false
}

// Parser reads lines of one format and keeps those its filter matches,
// counting the others. It is not safe for concurrent use.
type Parser struct {
	Format Format
	Filter *Filter // nil keeps every line
	// Filtered counts well-formed lines the filter left out.
	Filtered int64
}

// Parse reads line. It returns keep false, and no error, for a line the
// filter leaves out; a malformed line is an error, whatever the filter.
func (p *Parser) Parse(line []byte) (e Entry, keep bool, err error) {
	e, err = Parse(p.Format, line)
	if err != nil {
		return Entry{}, false, err
	}
	if !p.Filter.Match(&e) {
		p.Filtered++
		return Entry{}, false, nil
	}
	return e, true, nil
}

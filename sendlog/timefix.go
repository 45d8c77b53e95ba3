package sendlog

import (
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fastjson"
)

// plausibleTimes bound the instants a field must hold to be offered as a
// log's time field: a status code or a token count read as epoch seconds
// falls before them.
var plausibleTimes = [2]int64{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()}

// noTimeField is the error for a JSON record with none of the default
// time fields, with a Fix naming the first field (in the record's order,
// nested ones included) that holds a time between 2000 and 2200.
func (p *lineParser) noTimeField(v *fastjson.Value) error {
	msg := fmt.Sprintf("no time field (%s, each maybe ending in _ms, _us, _ns or _s); set sendlog.Options.TimeField", orList(timeBases))
	var found string
	visitLeaves(v, func(path string, f *fastjson.Value) bool {
		var text []byte
		switch f.Type() {
		case fastjson.TypeNumber:
			text = f.MarshalTo(nil)
		case fastjson.TypeString:
			text, _ = f.StringBytes()
		default:
			return true
		}
		at, err := newTimeParser(p.tp.unit).parse([]byte(strings.TrimSpace(string(text))))
		if err == nil && at >= plausibleTimes[0] && at < plausibleTimes[1] {
			found = path
			return false
		}
		return true
	})
	if found == "" {
		return fmt.Errorf("%s", msg)
	}
	return &fixError{msg: fmt.Sprintf("%s; field %q holds a time", msg, found), fix: Fix{Option: "TimeField", Value: found}}
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// visitLeaves calls fn with the dotted path and value of each of v's
// fields that is not an object, in the record's order, entering nested
// objects a few levels deep, until fn returns false.
func visitLeaves(v *fastjson.Value, fn func(path string, f *fastjson.Value) bool) {
	more := true
	var walk func(prefix string, o *fastjson.Object, depth int)
	walk = func(prefix string, o *fastjson.Object, depth int) {
		o.Visit(func(k []byte, f *fastjson.Value) {
			if !more {
				return
			}
			path := prefix + string(k)
			if f.Type() != fastjson.TypeObject {
				more = fn(path, f)
			} else if depth < 4 {
				sub, _ := f.Object()
				walk(path+".", sub, depth+1)
			}
		})
	}
	if o, err := v.Object(); err == nil {
		walk("", o, 1)
	}
}

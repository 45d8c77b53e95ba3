package sendlog

import (
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// textColumns finds the column of each text source in a CSV header: a
// header name (without regard to case or surrounding space) or a 1-based
// index; -1 where the header has none. nil without sources.
func textColumns(head []string, sources []TextSource) []int {
	if len(sources) == 0 {
		return nil
	}
	cols := make([]int, len(sources))
	for i, s := range sources {
		cols[i] = -1
		if s.Col == "" {
			continue
		}
		if n, err := strconv.Atoi(s.Col); err == nil && n >= 1 && n <= len(head) {
			cols[i] = n - 1
			continue
		}
		for j, h := range head {
			if strings.EqualFold(strings.TrimSpace(h), s.Col) {
				cols[i] = j
				break
			}
		}
	}
	return cols
}

// jsonTexts reads the text of each field path of v ("" where v has none).
func jsonTexts(v *fastjson.Value, paths [][]string) []string {
	out := make([]string, len(paths))
	for i, path := range paths {
		if path != nil {
			out[i] = jsonText(v.Get(path...))
		}
	}
	return out
}

// jsonText is a field's text as an HTTP header would carry it: a string's
// contents, a number as written, a list's members joined by ", ", and
// anything else as its JSON; "" for none or null.
func jsonText(f *fastjson.Value) string {
	if f == nil {
		return ""
	}
	switch f.Type() {
	case fastjson.TypeNull:
		return ""
	case fastjson.TypeString:
		b, _ := f.StringBytes()
		return strings.TrimSpace(string(b))
	case fastjson.TypeArray:
		items, _ := f.Array()
		parts := make([]string, len(items))
		for i, it := range items {
			parts[i] = jsonText(it)
		}
		return strings.Join(parts, ", ")
	}
	return string(f.MarshalTo(nil))
}

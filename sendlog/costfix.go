package sendlog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/valyala/fastjson"
)

// costCandidate picks, among the names a log offers (a CSV header's
// columns, or a JSON record's numeric fields as dotted paths), the one
// that likely holds unit's cost where want, the name the options gave, is
// missing: a name whose last part is want's ("usage.prompt_tokens" for
// prompt_tokens), else the unit itself, else total_UNIT, else the only
// name that contains the unit as a word ("usage.output_tokens" for
// output_tokens). "" when none or several tie: a guess between
// prompt_tokens and completion_tokens is not made.
func costCandidate(unit, want string, names []string) string {
	unit, want = strings.ToLower(unit), leafOf(want)
	var same, exact, total, contains []string
	for _, n := range names {
		leaf := leafOf(n)
		switch {
		case leaf == want && strings.TrimSpace(n) != strings.TrimSpace(want):
			same = append(same, n)
		case leaf == unit:
			exact = append(exact, n)
		case leaf == "total_"+unit || leaf == unit+"_total" || leaf == "total"+unit:
			total = append(total, n)
		case containsWord(leaf, unit):
			contains = append(contains, n)
		}
	}
	for _, set := range [][]string{same, exact, total, contains} {
		if len(set) == 1 {
			return strings.TrimSpace(set[0])
		}
		if len(set) > 1 {
			return ""
		}
	}
	return ""
}

// leafOf is the last part of a dotted name, in lower case.
func leafOf(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// containsWord reports whether unit is in name as a whole part between
// underscores (or the ends): "tokens" in "total_tokens", not "tokenset".
func containsWord(name, unit string) bool {
	for i := strings.Index(name, unit); i >= 0; {
		end := i + len(unit)
		if (i == 0 || name[i-1] == '_') && (end == len(name) || name[end] == '_') {
			return true
		}
		next := strings.Index(name[i+1:], unit)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// costFixError is the error for a cost's missing field want (what, e.g.
// `no field "tokens"`), with a Fix where one of names likely holds it. setting is how the options name the cost ("sendlog.Options.Costs
// tokens=tokens").
func costFixError(setting, what, unit, want string, names []string) error {
	msg := setting + ": " + what
	c := costCandidate(unit, want, names)
	if c == "" {
		return fmt.Errorf("%s", msg)
	}
	return &fixError{
		msg: fmt.Sprintf("%s; %q may hold the %s cost", msg, c, unit),
		fix: Fix{Option: "Costs", Value: unit + "=" + c},
	}
}

// numericPaths lists the dotted paths of v's numeric fields, nested
// objects included down to a few levels, sorted.
func numericPaths(v *fastjson.Value) []string {
	var out []string
	visitLeaves(v, func(path string, f *fastjson.Value) bool {
		if f.Type() == fastjson.TypeNumber {
			out = append(out, path)
		}
		return true
	})
	sort.Strings(out)
	return out
}

// withCostFix adds to err, a cost column want missing from a CSV header (rec),
// the column that likely holds unit's cost, as a Fix.
func withCostFix(err error, unit, want string, rec []string) error {
	ie, ok := err.(*InputError)
	if !ok || ie.Fix != nil {
		return err
	}
	if c := costCandidate(unit, want, rec); c != "" {
		ie.Msg += fmt.Sprintf("; %q may hold the %s cost", c, unit)
		ie.Fix = &Fix{Option: "Costs", Value: unit + "=" + c}
	}
	return err
}

package keytext

import (
	"strconv"
	"unicode/utf8"
)

// Show returns s as every output shows it: unchanged when it is valid
// UTF-8, and otherwise the body of strconv.Quote(s), the bytes that are not
// UTF-8 written \xNN (so "caf\xe9" reads caf\xe9). A writer that quotes
// keys with strconv.Quote or %q already follows the rule.
//
// A valid key that already reads like an escaped one (the six characters
// caf\xe9) is shown as that invalid key is; the raw key, in the log, is
// never changed.
func Show(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

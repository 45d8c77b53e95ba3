package scenarios

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ReadTimes reads a plain send log, one decimal-seconds timestamp a line
// ("7.005153000"), as `rlcheck check` reads it; blank lines and lines
// starting with # are skipped. Digits are converted exactly, with no float
// in between; more than nine fractional digits are an error.
func ReadTimes(name string, r io.Reader) ([]int64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	var out []int64
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		t, err := ParseSeconds(text)
		if err != nil {
			return nil, &Error{File: name, Line: line, Msg: err.Error()}
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &Error{File: name, Line: line + 1, Msg: fmt.Sprintf("line longer than %d KiB: not a send log", maxLine>>10)}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(out) == 0 {
		return nil, &Error{File: name, Msg: "no timestamps"}
	}
	return out, nil
}

// maxLine bounds a line of a replayed log.
const maxLine = 64 << 10

// excerptLen bounds how much of a bad line an error quotes.
const excerptLen = 80

// excerpt quotes s, cut to its first excerptLen bytes (on a rune boundary).
func excerpt(s string) string {
	if len(s) <= excerptLen {
		return strconv.Quote(s)
	}
	cut := excerptLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

// ParseSeconds reads non-negative decimal seconds into nanoseconds exactly.
// Its errors quote at most the first 80 bytes of s.
func ParseSeconds(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("%s is not decimal seconds", excerpt(s))
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("%s has more than 9 fractional digits", excerpt(s))
	}
	var sec int64
	if whole != "" {
		v, err := strconv.ParseUint(whole, 10, 63)
		if err != nil || v > 9_000_000_000 {
			return 0, fmt.Errorf("%s is not decimal seconds", excerpt(s))
		}
		sec = int64(v)
	}
	var ns int64
	if frac != "" {
		v, err := strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("%s is not decimal seconds", excerpt(s))
		}
		ns = int64(v)
	}
	return sec*1_000_000_000 + ns, nil
}

package scenarios

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ReadTimes reads a plain send log, one decimal-seconds timestamp a line
// ("7.005153000"), as `rlcheck check` reads it; blank lines and lines
// starting with # are skipped. Digits are converted exactly, with no float
// in between; more than nine fractional digits are an error.
func ReadTimes(name string, r io.Reader) ([]int64, error) {
	sc := bufio.NewScanner(r)
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
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(out) == 0 {
		return nil, &Error{File: name, Msg: "no timestamps"}
	}
	return out, nil
}

// ParseSeconds reads non-negative decimal seconds into nanoseconds exactly.
func ParseSeconds(s string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("%q is not decimal seconds", s)
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("%q has more than 9 fractional digits", s)
	}
	var sec int64
	if whole != "" {
		v, err := strconv.ParseUint(whole, 10, 63)
		if err != nil || v > 9_000_000_000 {
			return 0, fmt.Errorf("%q is not decimal seconds", s)
		}
		sec = int64(v)
	}
	var ns int64
	if frac != "" {
		v, err := strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("%q is not decimal seconds", s)
		}
		ns = int64(v)
	}
	return sec*1_000_000_000 + ns, nil
}

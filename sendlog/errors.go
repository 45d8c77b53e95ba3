package sendlog

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// InputError is bad input at a known place.
type InputError struct {
	File string
	Line int64  // 1-based; 0 when the error concerns the whole file
	Text string // the offending text, shortened for display
	Msg  string
	// Fix, when set, is a change to the Options that would likely read
	// the input; a command line words it as its flag.
	Fix *Fix
}

// Fix names an Options field ("TimeCol", "Unit") and the value for it
// that would likely read the input.
type Fix struct {
	Option, Value string
}

// fixError is an error whose fix is known.
type fixError struct {
	msg string
	fix Fix
}

func (e *fixError) Error() string { return e.msg }

// LineNumber returns the line the error concerns (0: the whole file), for
// reports that list skipped lines without importing this package.
func (e *InputError) LineNumber() int64 { return e.Line }

func (e *InputError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += ":" + strconv.FormatInt(e.Line, 10)
	}
	if e.Text == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Msg, quoteShort(e.Text))
}

// quoteShort quotes text for an error message, cut to a readable length.
func quoteShort(s string) string {
	const max = 80
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "…"
	}
	return strconv.Quote(s)
}

// lineError is the InputError for err at a line of text.
func lineError(line int64, text []byte, err error) *InputError {
	e := &InputError{Line: line, Text: string(text), Msg: err.Error()}
	var fe *fixError
	if errors.As(err, &fe) {
		e.Fix = &fe.fix
	}
	return e
}

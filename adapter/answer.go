package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Outcome is what became of one call.
type Outcome uint8

// The outcomes of a call.
const (
	Unanswered Outcome = iota
	Sent               // sent at SendNS
	Refused            // refused at once, never sent (a cost no wait admits)
	Cancelled          // gave up waiting at the scenario's timeout
)

// MaxInstant is the latest send instant believed: far from int64's end,
// so that a send delay added to it cannot overflow.
const MaxInstant = 1 << 62

// Result is one call's answer.
type Result struct {
	Outcome Outcome
	SendNS  int64  // Sent: the send instant on the program's virtual clock
	Reason  string // Refused: the program's words
	line    int    // the output line that answered it
}

// Answer is a run's answer, call by call (indexed by Call.ID).
type Answer struct {
	Strategy string
	Seed     uint64
	Calls    []Result
}

// ExchangeError is an answer rlcheck does not believe, or one that never
// came: Line is the line of the program's output it is about (0 before
// the first) and Text that line.
type ExchangeError struct {
	Command string
	Line    int
	Text    string
	Run     int64 // 0 outside a run
	Seed    uint64
	// After says the trouble came after line Line (the output ended,
	// the time ran out), not on it.
	After bool
	Err   error
}

func (e *ExchangeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "adapter %q: ", e.Command)
	switch {
	case e.After:
		fmt.Fprintf(&b, "after output line %d", e.Line)
	case e.Line > 0:
		fmt.Fprintf(&b, "output line %d", e.Line)
	default:
		b.WriteString("before its first output line")
	}
	if e.Run > 0 {
		fmt.Fprintf(&b, " (run %d, seed %d)", e.Run, e.Seed)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Text != "" {
		fmt.Fprintf(&b, ": %s", quoteLine(e.Text))
	}
	return b.String()
}

func (e *ExchangeError) Unwrap() error { return e.Err }

// quoteLine quotes at most 200 bytes of a line.
func quoteLine(s string) string {
	if len(s) > 200 {
		return fmt.Sprintf("%q...", s[:200])
	}
	return fmt.Sprintf("%q", s)
}

// hello is the program's first line.
type hello struct {
	Adapter    *int     `json:"rlcheck_adapter"`
	Strategies []string `json:"strategies"`
}

// answerLine is one line of a run's answer.
type answerLine struct {
	Run       *int64  `json:"run"`
	Call      *int    `json:"call"`
	SendNS    *int64  `json:"send_ns"`
	Refused   *string `json:"refused"`
	Cancelled bool    `json:"cancelled"`
	Done      bool    `json:"done"`
	Error     *string `json:"error"`
}

// decodeStrict reads one JSON object from text into v, refusing fields
// not among keys (spelt exactly: encoding/json would match "Run" to
// "run") and anything after the object.
func decodeStrict(text string, v any, keys ...string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return fmt.Errorf("not a protocol line: want a JSON object (%v)", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not a protocol line: text after the JSON object")
	}
	for k := range fields {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("not a protocol line: unknown field %q", k)
		}
	}
	if err := json.Unmarshal([]byte(text), v); err != nil {
		return fmt.Errorf("not a protocol line: %w", err)
	}
	return nil
}

// parseHello checks the program's first line and returns its strategies.
func parseHello(text string) ([]string, error) {
	var h hello
	if err := decodeStrict(text, &h, "rlcheck_adapter", "strategies"); err != nil {
		return nil, err
	}
	if h.Adapter == nil {
		return nil, errors.New(`the first line must be the hello, {"rlcheck_adapter": 1, "strategies": [...]}`)
	}
	if *h.Adapter != Version {
		return nil, fmt.Errorf("protocol version %d; this rlcheck speaks version %d", *h.Adapter, Version)
	}
	if len(h.Strategies) == 0 {
		return nil, errors.New("the hello names no strategies")
	}
	seen := map[string]bool{}
	for _, s := range h.Strategies {
		if s == "" || strings.ContainsAny(s, " \t,=") || seen[s] {
			return nil, fmt.Errorf("strategy name %q is empty, repeated or holds a space, comma or '='", s)
		}
		seen[s] = true
	}
	return h.Strategies, nil
}

// accept checks one answer line of run against what is known and records
// it in ans; done reports the line that closes the run.
func accept(run *Run, ans *Answer, text string, lineNo int) (done bool, err error) {
	if len(bytes.TrimSpace([]byte(text))) == 0 {
		return false, errors.New("an empty line")
	}
	var l answerLine
	if err := decodeStrict(text, &l, "run", "call", "send_ns", "refused", "cancelled", "done", "error"); err != nil {
		return false, err
	}
	switch {
	case l.Run == nil:
		return false, errors.New(`no "run"`)
	case *l.Run != run.Run:
		return false, fmt.Errorf("answers run %d; the run under way is %d", *l.Run, run.Run)
	case l.Error != nil:
		return false, fmt.Errorf("the program reports an error: %s", *l.Error)
	case l.Done:
		if l.Call != nil || l.SendNS != nil || l.Refused != nil || l.Cancelled {
			return false, errors.New(`"done" comes alone`)
		}
		return true, unanswered(ans)
	case l.Call == nil:
		return false, errors.New(`neither "call" nor "done"`)
	}
	return false, record(run, ans, &l, lineNo)
}

// record takes the answer l gives for one call.
func record(run *Run, ans *Answer, l *answerLine, lineNo int) error {
	id := *l.Call
	if id < 0 || id >= len(run.Calls) {
		return fmt.Errorf("unknown call %d (the run has calls 0 to %d)", id, len(run.Calls)-1)
	}
	if prev := ans.Calls[id]; prev.Outcome != Unanswered {
		return fmt.Errorf("call %d answered twice (first on output line %d)", id, prev.line)
	}
	kinds := 0
	for _, set := range []bool{l.SendNS != nil, l.Refused != nil, l.Cancelled} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf(`call %d needs exactly one of "send_ns", "refused" and "cancelled"`, id)
	}
	r := Result{line: lineNo}
	switch {
	case l.SendNS != nil:
		r.Outcome, r.SendNS = Sent, *l.SendNS
		if at := run.Calls[id].ArrivalNS; r.SendNS < at {
			return fmt.Errorf("call %d sends at %d ns, before its arrival at %d ns (%v early)", id, r.SendNS, at, time.Duration(at-r.SendNS))
		}
		if r.SendNS > MaxInstant {
			return fmt.Errorf("call %d sends at %d ns, beyond %d ns (about 146 years of virtual time)", id, r.SendNS, int64(MaxInstant))
		}
	case l.Refused != nil:
		r.Outcome, r.Reason = Refused, *l.Refused
	default:
		if run.TimeoutNS == 0 {
			return fmt.Errorf("call %d cancelled, but the scenario sets no timeout", id)
		}
		r.Outcome = Cancelled
	}
	ans.Calls[id] = r
	return nil
}

// unanswered names the calls a closed run left without an answer.
func unanswered(ans *Answer) error {
	missing, first := 0, -1
	for i, r := range ans.Calls {
		if r.Outcome == Unanswered {
			if first < 0 {
				first = i
			}
			missing++
		}
	}
	if missing > 0 {
		return fmt.Errorf("the run is closed with %d of %d calls unanswered, the first call %d", missing, len(ans.Calls), first)
	}
	return nil
}

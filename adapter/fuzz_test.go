package adapter

import (
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fuzzRun is a run of three calls arriving at 10, 20 and 30 ns, with a
// timeout so that a cancellation is a valid answer.
func fuzzRun() *Run {
	return &Run{Strategy: "fake", Seed: 7, TimeoutNS: 1000,
		Calls: []Call{{ID: 0, ArrivalNS: 10}, {ID: 1, ArrivalNS: 20}, {ID: 2, ArrivalNS: 30}}}
}

const fuzzHello = `{"rlcheck_adapter":1,"strategies":["fake"]}` + "\n"

// exchange feeds output (after the hello) to a process reading it as a
// program's output, and returns its answer to fuzzRun.
func exchange(t *testing.T, output string) (*Answer, error) {
	pr := newProc("fake", nil, nopCloser{io.Discard}, strings.NewReader(fuzzHello+output), &tail{})
	text, err := pr.next(time.Now().Add(5 * time.Second))
	require.NoError(t, err)
	_, err = parseHello(text)
	require.NoError(t, err)
	return pr.run(fuzzRun(), 5*time.Second)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// oracleLine is the meaning of one output line, read from the protocol's
// text in docs/adapters.md and nothing of the code above: a call's answer
// (kind "send", "refused" or "cancelled"), the run's end ("done"), or ""
// for a line that is no valid answer to run 1.
func oracleLine(line string) (kind string, call int, at int64) {
	if !json.Valid([]byte(line)) {
		return "", 0, 0
	}
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if d.Decode(&m) != nil || m == nil {
		return "", 0, 0
	}
	ints := map[string]int64{}
	given := map[string]bool{}
	for k, v := range m {
		switch {
		case k != "run" && k != "call" && k != "send_ns" && k != "refused" && k != "error" && k != "cancelled" && k != "done":
			return "", 0, 0 // an unknown field, even null
		case v == nil:
			continue // null is as if absent
		}
		switch k {
		case "run", "call", "send_ns":
			n, ok := v.(json.Number)
			if !ok || !regexp.MustCompile(`^-?[0-9]+$`).MatchString(n.String()) {
				return "", 0, 0
			}
			x, err := strconv.ParseInt(n.String(), 10, 64)
			if err != nil || (k == "call" && (x < -1<<31 || x > 1<<31-1)) {
				return "", 0, 0
			}
			ints[k], given[k] = x, true
		case "refused", "error":
			if _, ok := v.(string); !ok {
				return "", 0, 0
			}
			given[k] = true
		case "cancelled", "done":
			b, ok := v.(bool)
			if !ok {
				return "", 0, 0
			}
			given[k] = b
		default:
			return "", 0, 0
		}
	}
	if !given["run"] || ints["run"] != 1 || given["error"] {
		return "", 0, 0
	}
	if given["done"] {
		if given["call"] || given["send_ns"] || given["refused"] || given["cancelled"] {
			return "", 0, 0
		}
		return "done", 0, 0
	}
	n := 0
	for _, k := range []string{"send_ns", "refused", "cancelled"} {
		if given[k] {
			n++
			kind = k
		}
	}
	if !given["call"] || n != 1 {
		return "", 0, 0
	}
	return strings.TrimSuffix(kind, "_ns"), int(ints["call"]), ints["send_ns"]
}

// oracleValid says whether output answers fuzzRun: every call of the run
// exactly once, no send before its arrival, then the end, with no line in
// between that is not an answer.
func oracleValid(output string) bool {
	arrival := []int64{10, 20, 30}
	seen := map[int]bool{}
	for _, line := range strings.Split(output, "\n") {
		kind, call, at := oracleLine(strings.TrimSuffix(line, "\r"))
		switch {
		case kind == "done":
			return len(seen) == len(arrival)
		case kind == "" || call < 0 || call >= len(arrival) || seen[call]:
			return false
		case kind == "send" && (at < arrival[call] || at > 1<<62):
			return false
		}
		seen[call] = true
	}
	return false // no end
}

// FuzzExchange: whatever a program writes, rlcheck believes it exactly
// when the oracle finds it a valid answer, and otherwise refuses it with
// an *ExchangeError that names a line; it never panics or hangs.
func FuzzExchange(f *testing.F) {
	valid := `{"run":1,"call":0,"send_ns":10}` + "\n" + `{"run":1,"call":2,"refused":"cost 9 over 5/1s"}` + "\n" +
		`{"run":1,"call":1,"cancelled":true}` + "\n" + `{"run":1,"done":true}` + "\n"
	f.Add(valid)
	lines := strings.SplitAfter(valid, "\n")
	f.Add(lines[2] + lines[0] + lines[1] + lines[3])                                                      // reordered: still valid
	f.Add(lines[0] + lines[3])                                                                            // a missing call
	f.Add(valid[:len(valid)/2])                                                                           // truncated
	f.Add(strings.Replace(valid, `"send_ns":10`, `"send_ns":9`, 1))                                       // a send before its arrival
	f.Add(lines[0] + lines[0] + lines[1] + lines[2] + lines[3])                                           // a call twice
	f.Add(strings.Replace(valid, `"call":2`, `"call":3`, 1))                                              // an unknown call
	f.Add(strings.Replace(valid, `{"run":1,"done"`, `{"run":2,"done"`, 1))                                // another run
	f.Add(strings.Replace(valid, `"run":1,"call":0`, `"Run":1,"call":0`, 1))                              // a field spelt otherwise
	f.Add(lines[0] + lines[1] + lines[2] + `{"run":1,"done":true,"call":1}` + "\n")                       // done not alone
	f.Add(lines[0] + `{"run":1,"call":1,"send_ns":1e3}` + "\n" + lines[1] + lines[3])                     // a float
	f.Add(lines[0] + `{"run":1,"error":"boom"}` + "\n")                                                   // the program's error
	f.Add("\x00\xff{" + valid)                                                                            // garbage
	f.Add(lines[0] + lines[1] + `{"run":1,"call":1,"send_ns":null,"cancelled":true}` + "\r\n" + lines[3]) // null, CRLF
	f.Add(lines[0] + lines[1] + `{"run":1,"call":1,"send_ns":4611686018427387904}` + "\n" + lines[3])     // 2^62: the last instant believed
	f.Add(lines[0] + lines[1] + `{"run":1,"call":1,"send_ns":4611686018427387905}` + "\n" + lines[3])     // past it
	f.Add(lines[0] + lines[1] + `{"run":1,"call":1,"send_ns":9223372036854775808}` + "\n" + lines[3])     // past int64
	f.Fuzz(func(t *testing.T, output string) {
		if strings.Count(output, "\n") > 50 || len(output) > 4096 {
			return
		}
		ans, err := exchange(t, output)
		want := oracleValid(output)
		if !want {
			var ee *ExchangeError
			require.True(t, errors.As(err, &ee), "believed %q: %+v", output, ans)
			msg := err.Error()
			assert.Regexp(t, `output line [0-9]+|after output line [0-9]+`, msg)
			return
		}
		require.NoError(t, err, "refused a valid answer %q", output)
		for i, r := range ans.Calls {
			assert.NotEqual(t, Unanswered, r.Outcome, "call %d", i)
		}
	})
}

// TestExchangeNamesTheLine pins one refusal's words.
func TestExchangeNamesTheLine(t *testing.T) {
	_, err := exchange(t, `{"run":1,"call":0,"send_ns":10}`+"\n"+`{"run":1,"call":1,"send_ns":19}`+"\n")
	require.Error(t, err)
	assert.Equal(t, `adapter "fake": output line 3 (run 1, seed 7): call 1 sends at 19 ns, before its arrival at 20 ns (1ns early): "{\"run\":1,\"call\":1,\"send_ns\":19}"`, err.Error())
	_, err = exchange(t, `{"run":1,"call":0,"send_ns":10}`+"\n")
	assert.EqualError(t, err, `adapter "fake": after output line 2 (run 1, seed 7): the output ended: "{\"run\":1,\"call\":0,\"send_ns\":10}"`)
}

// FuzzHello: a first line is believed only as a version-1 hello naming
// distinct strategies, each without space, comma or '='.
func FuzzHello(f *testing.F) {
	for _, s := range []string{fuzzHello, `{"rlcheck_adapter":2,"strategies":["a"]}`, `{"rlcheck_adapter":1,"strategies":[]}`,
		`{"rlcheck_adapter":1,"strategies":["a","a"]}`, `{"rlcheck_adapter":1,"strategies":["a b"]}`, `{"rlcheck_adapter":1}`,
		`{"RLCHECK_ADAPTER":1,"strategies":["a"]}`, `{"rlcheck_adapter":1.0,"strategies":["a"]}`, `[]`, `null`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		names, err := parseHello(line)
		var m struct {
			V *json.Number `json:"rlcheck_adapter"`
			S []string     `json:"strategies"`
		}
		ok := json.Valid([]byte(line)) && json.Unmarshal([]byte(line), &m) == nil && m.V != nil && m.V.String() == "1" && len(m.S) > 0
		if err != nil {
			return // refusing is always safe; what is believed is checked below
		}
		require.True(t, ok, "believed %q", line)
		seen := map[string]bool{}
		for _, n := range names {
			assert.False(t, n == "" || strings.ContainsAny(n, " \t,=") || seen[n], "name %q of %q", n, line)
			seen[n] = true
		}
		assert.Equal(t, m.S, names)
	})
}

package infer

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/sendlog"
)

// csvLog reads a CSV log given as text.
func csvLog(t *testing.T, text string, opt ReadOptions) *Log {
	t.Helper()
	return readLog(t, "log.csv", text, opt)
}

func readLog(t *testing.T, name, text string, opt ReadOptions) *Log {
	t.Helper()
	log, err := Read(name, func() (io.Reader, error) { return strings.NewReader(text), nil }, opt)
	require.NoError(t, err)
	return log
}

// TestNoRefusalGivesLowerBoundsOnly: without a 429 there is no rule to
// find and no upper bound to report; every window's least N is the fullest
// window of accepted calls, plus nothing made up.
func TestNoRefusalGivesLowerBoundsOnly(t *testing.T) {
	log := csvLog(t, "ts_ms,status\n0,200\n100,200\n200,200\n1500,200\n", ReadOptions{Log: sendlog.Options{Unit: sendlog.UnitMillis}})
	res := Infer(log.Sends[""], Options{})
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		assert.True(t, res.Fits[rd].Fits)
		assert.Empty(t, res.Fits[rd].Rules, "no refusal: no rule, no upper bound")
	}
	for _, c := range res.Candidates {
		want := 4 // the whole log lies in every window of 2s or more
		switch {
		case c.Window == time.Second && c.Kind == 0:
			want = 3 // 0, 100, 200 ms
		case c.Window == time.Second:
			want = 3 // the fixed second [0, 1s)
		}
		assert.Equal(t, want, c.AtLeast, "%v %v", c.Window, c.Kind)
		assert.Zero(t, c.Explains)
	}
	var text, js bytes.Buffer
	rep := Run("log.csv", log, Options{})
	require.NoError(t, rep.WriteText(&text, false))
	assert.Contains(t, text.String(), "lower bounds only")
	assert.NotContains(t, text.String(), "rules:", "no contract is made up")
	require.NoError(t, rep.WriteJSON(&js))
	var out struct{ Keys []jsonKeyOut }
	require.NoError(t, json.Unmarshal(js.Bytes(), &out))
	assert.Equal(t, "lower bounds only", out.Keys[0].Verdict)
	assert.Empty(t, out.Keys[0].Contract)
	assert.Empty(t, out.Keys[0].Rules)
	assert.False(t, rep.Contradicted())
}

// TestNoCallsInfersNothing: a log whose calls all have other statuses
// says nothing, rather than "at least 1".
func TestNoCallsInfersNothing(t *testing.T) {
	rep := Run("log.csv", csvLog(t, "ts,status\n1,503\n2,500\n", ReadOptions{}), Options{})
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b, false))
	assert.Equal(t, "log.csv: 0 calls, 0 accepted, 0 refused (429)\nNo call with a 2xx or 429 status: nothing to infer.\n\n2 calls of another status than 2xx or 429 left out.\n", b.String())
}

// TestContradictionNamesItsLines: three calls accepted within 2 ms, then a
// call refused days later with nothing before it in any window of the
// grid: no rule refuses it without refusing the third accepted call.
func TestContradictionNamesItsLines(t *testing.T) {
	day := int64(24 * time.Hour / time.Millisecond)
	text := "ts_ms,status\n0,200\n1,200\n2,200\n" + itoa(3*day) + ",429\n"
	log := csvLog(t, text, ReadOptions{Log: sendlog.Options{Unit: sendlog.UnitMillis}})
	res := Infer(log.Sends[""], Options{})
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		f := res.Fits[rd]
		require.False(t, f.Fits, "%v", rd)
		require.Len(t, f.Unexplained, 1)
		u := f.Unexplained[0]
		assert.Equal(t, int64(5), u.Line, "the refused call")
		assert.Equal(t, int64(4), u.TightestLine, "the accepted call with more before it")
		assert.Equal(t, 0, u.Before)
		assert.Equal(t, 3, u.AtLeast)
	}
	rep := Run("log.csv", log, Options{})
	assert.True(t, rep.Contradicted())
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b, false))
	assert.Contains(t, b.String(), "CONTRADICTION")
	assert.Contains(t, b.String(), "line 5 at 259200.000000000 s was refused with 0 earlier calls in its 1s sliding window; line 4 was accepted with 2 in its own")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReadStatuses: 2xx accepted, 429 refused, other codes left out and
// counted; a status that is no HTTP code, or none, is an input error
// naming its line; a log without statuses is refused.
func TestReadStatuses(t *testing.T) {
	log := csvLog(t, "ts,code\n1,200\n2,204\n3,429\n4,503\n5,\"429\"\n", ReadOptions{StatusCol: "code"})
	assert.Equal(t, []Send{{At: 1e9, Line: 2}, {At: 2e9, Line: 3}, {At: 3e9, Refused: true, Line: 4}, {At: 5e9, Refused: true, Line: 6}}, log.Sends[""])
	assert.Equal(t, 1, log.Other)

	jl := readLog(t, "log.jsonl", `{"ts":1,"status":200}`+"\n"+`{"ts":2,"status":429}`+"\n", ReadOptions{})
	assert.Equal(t, []Send{{At: 1e9, Line: 1}, {At: 2e9, Refused: true, Line: 2}}, jl.Sends[""])

	for text, want := range map[string]string{
		"ts,status\n1,200\n2,ok\n":   `log.csv:3: status "ok": not an HTTP status code (100 to 599): "2,ok"`,
		"ts,status\n1,200\n2,\n":     `log.csv:3: no status: "2,"`,
		"ts,status\n1,200\n2,4290\n": `log.csv:3: status "4290": not an HTTP status code (100 to 599): "2,4290"`,
		"ts,status\n1,200\n2\n":      `log.csv:3: no column 2 (the status): "2"`,
	} {
		_, err := Read("log.csv", func() (io.Reader, error) { return strings.NewReader(text), nil }, ReadOptions{})
		var ie *sendlog.InputError
		require.ErrorAs(t, err, &ie, text)
		assert.Equal(t, want, err.Error())
	}
	_, err := Read("log.txt", func() (io.Reader, error) { return strings.NewReader("1\n2\n"), nil }, ReadOptions{})
	assert.ErrorIs(t, err, ErrNoStatus)
	_, err = Read("log.csv", func() (io.Reader, error) { return strings.NewReader("ts,code\n1,200\n"), nil }, ReadOptions{})
	assert.ErrorContains(t, err, `no column named "status"`)
	_, err = Read("log.csv", func() (io.Reader, error) { return strings.NewReader("ts,code\n1,200\n"), nil }, ReadOptions{StatusCol: "3"})
	assert.EqualError(t, err, `log.csv:1: sendlog.Options.StatusCol 3: the first line has 2 columns: "ts,code"`)
}

// TestReadPerKey: with a key column, each key gets its own calls, in
// order of first appearance, with their statuses and lines.
func TestReadPerKey(t *testing.T) {
	log := csvLog(t, "ts,tenant,status\n1,a,200\n2,b,429\n3,a,503\n4,a,429\n", ReadOptions{Log: sendlog.Options{KeyCol: "tenant"}})
	assert.Equal(t, []string{"a", "b"}, log.Keys)
	assert.Equal(t, []Send{{At: 1e9, Line: 2}, {At: 4e9, Refused: true, Line: 5}}, log.Sends["a"])
	assert.Equal(t, []Send{{At: 2e9, Refused: true, Line: 3}}, log.Sends["b"])
	assert.Equal(t, 1, log.Other)
}

// FuzzStatus: any text in a status column reads as accepted only for a
// code from 200 to 299, refused only for 429, left out for another code
// from 100 to 599, and is an input error naming line 2 otherwise; never a
// panic.
func FuzzStatus(f *testing.F) {
	for _, s := range []string{"200", "429", " 204 ", `"429"`, "503", "ok", "", "4290", "-200", "2e2", "099", "600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\r\n\x00") {
			return
		}
		text := "ts,status\n1," + string(sendlog.AppendCSVField(nil, s)) + "\n"
		log, err := Read("log.csv", func() (io.Reader, error) { return strings.NewReader(text), nil }, ReadOptions{})
		n, aerr := strconv.Atoi(strings.TrimSpace(s))
		if aerr != nil || n < 100 || n > 599 {
			var ie *sendlog.InputError
			require.ErrorAs(t, err, &ie, "%q", s)
			require.EqualValues(t, 2, ie.Line, "%q", s)
			return
		}
		require.NoError(t, err, "%q", s)
		sends := log.Sends[""]
		switch {
		case n >= 200 && n < 300:
			require.Equal(t, []Send{{At: 1e9, Line: 2}}, sends, "%q", s)
		case n == 429:
			require.Equal(t, []Send{{At: 1e9, Refused: true, Line: 2}}, sends, "%q", s)
		default:
			require.Empty(t, sends, "%q", s)
			require.Equal(t, 1, log.Other, "%q", s)
		}
	})
}

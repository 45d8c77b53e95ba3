package infer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rlheader"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// headerLog is a CSV log of ts_ms, status and the named header columns.
func headerLog(cols string, rows ...string) string {
	return "ts_ms,status," + cols + "\n" + strings.Join(rows, "\n") + "\n"
}

var msUnit = ReadOptions{Log: sendlog.Options{Unit: sendlog.UnitMillis}}

// TestRefusedWhileAnnouncingRoom: a 429 whose own answer announced a
// remaining call quota above 0, in every form that announces one, is
// counted with its line; a 429 with any quota at 0 is not.
func TestRefusedWhileAnnouncingRoom(t *testing.T) {
	for _, c := range []struct {
		col, room, spent string
	}{
		{"x_ratelimit_remaining", "2", "0"},
		{"x_ratelimit_remaining_requests", "1", "0"},
		{"ratelimit", `"limit=5, remaining=3, reset=1"`, `"limit=5, remaining=0, reset=1"`},
	} {
		log := csvLog(t, headerLog(c.col, "0,200,"+c.room, "100,429,"+c.spent, "200,429,"+c.room, "300,429,"+c.room), msUnit)
		res := Infer(log.Sends[""], Options{})
		require.NotNil(t, res.Headers, c.col)
		assert.Equal(t, 2, res.Headers.RoomRefused, c.col)
		assert.Equal(t, int64(4), res.Headers.RoomRefusedLine, c.col)
	}
	// Calls left, tokens spent: the token limit explains the 429.
	log := csvLog(t, headerLog("x_ratelimit_remaining_requests,x_ratelimit_remaining_tokens", "0,429,5,0", "10,429,5,"), msUnit)
	res := Infer(log.Sends[""], Options{})
	assert.Equal(t, 1, res.Headers.RoomRefused)
	assert.Equal(t, int64(3), res.Headers.RoomRefusedLine)
}

// TestAcceptedPastAnnouncedLimit: the accepted calls past an announced
// limit are those that found N or more earlier calls in its window, as a
// direct count finds them, per kind, under the reading that fits best.
func TestAcceptedPastAnnouncedLimit(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		hidden := []rule.Rule{{Limit: 4 + rng.IntN(3), Window: 3 * time.Second}}
		ms := infertest.Traffic(rng, hidden[0], 300)
		calls := replay(infertest.NewProvider(hidden, seed%2 == 0), ms)
		announced := rule.Rule{Limit: hidden[0].Limit - 1, Window: 3 * time.Second}
		for i := range calls {
			calls[i].Ann = &Announced{Limits: []Limit{{N: int64(announced.Limit), Window: announced.Window, From: rlheader.HRateLimitPolicy}}}
		}
		res := Infer(calls, Options{})
		h := res.Headers
		require.NotNil(t, h)
		require.Len(t, h.Past, 2)
		assert.Equal(t, []time.Duration{3 * time.Second}, h.Added, "seed %d", seed)
		f := res.Fits[res.Best]
		require.Len(t, f.Rules, 1, "seed %d", seed)
		assert.Contains(t, append(f.Rules[0].AlsoFits, f.Rules[0].Rule()), hidden[0], "seed %d: the announced window joined the grid", seed)
		for i, k := range windowKinds {
			r := announced
			r.Kind = k
			n, first := 0, int64(0)
			for j, c := range calls {
				if !c.Refused && bruteBefore(calls, j, r, res.Best) >= r.Limit {
					if n++; n == 1 {
						first = c.Line
					}
				}
			}
			assert.Equal(t, PastLimit{Rule: r, Accepted: n, FirstLine: first}, h.Past[i], "seed %d", seed)
			if k == rule.Sliding {
				assert.Positive(t, n, "seed %d: the provider takes one call a window more than it announces", seed)
			}
		}
	}
}

// TestHeaderWindowJoinsGridOnlyWhenRead: without the header column, a
// window off the grid is not tried.
func TestHeaderWindowJoinsGridOnlyWhenRead(t *testing.T) {
	text := headerLog("ratelimit_policy", "0,200,5;w=3", "10,200,5;w=3")
	res := Infer(csvLog(t, text, msUnit).Sends[""], Options{})
	assert.Equal(t, []time.Duration{3 * time.Second}, res.Headers.Added)
	assert.Len(t, res.Candidates, (len(windowGrid)+1)*4)
	off := msUnit
	off.HeaderCols = map[Header]string{rlheader.HRateLimitPolicy: ""}
	res = Infer(csvLog(t, text, off).Sends[""], Options{})
	assert.Nil(t, res.Headers)
	assert.Len(t, res.Candidates, len(windowGrid)*4)
}

// TestMalformedHeaderIsCounted: a header that does not parse is counted,
// named by its line, and left out; the call still counts.
func TestMalformedHeaderIsCounted(t *testing.T) {
	log := csvLog(t, headerLog("ratelimit_policy,retry_after", "0,200,10;w=1,", "1,200,ten,", "2,429,10;w=1,later", `3,429,"10;w=x",5`, "4,200,ten,"), msUnit)
	assert.Equal(t, BadHeaders{N: 3, Line: 3, Text: "ten", Err: `"ten" is no count`}, log.BadHeaders[rlheader.HRateLimitPolicy], "each call's counted, the same text or not")
	assert.Equal(t, 1, log.BadHeaders[rlheader.HRetryAfter].N)
	assert.Equal(t, int64(4), log.BadHeaders[rlheader.HRetryAfter].Line)
	rep := Run("log.csv", log, Options{})
	assert.Equal(t, 5, rep.Calls)
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b, false))
	assert.Contains(t, b.String(), `3 malformed RateLimit-Policy headers left out, the first on line 3: "ten": "ten" is no count`)
	assert.Contains(t, b.String(), "Retry-After on 1 answer, from 5s to 5s.")
}

// TestHeadersOfALogWithoutHeaderLine: columns named by index are read
// from the first line on when it is a call.
func TestHeadersOfALogWithoutHeaderLine(t *testing.T) {
	opt := msUnit
	opt.StatusCol, opt.Log.TimeCol = "2", "1"
	opt.HeaderCols = map[Header]string{rlheader.HXRemaining: "3"}
	log := csvLog(t, "0,429,2\n10,429,0\n20,429,1\n", opt)
	res := Infer(log.Sends[""], Options{})
	require.NotNil(t, res.Headers)
	assert.Equal(t, 3, res.Headers.Answers)
	assert.Equal(t, 2, res.Headers.RoomRefused)
	assert.Equal(t, int64(1), res.Headers.RoomRefusedLine)
}

// TestRetryAfterDateIsPerCall: the same HTTP date asks each call for the
// wait from its own time.
func TestRetryAfterDateIsPerCall(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()
	date := "Fri, 02 Jan 2026 03:04:15 GMT"
	log := csvLog(t, headerLog("retry_after", fmt.Sprintf("%d,429,%q", at, date), fmt.Sprintf("%d,429,%q", at+4000, date)), msUnit)
	s := log.Sends[""]
	assert.Equal(t, []time.Duration{10 * time.Second, 6 * time.Second}, []time.Duration{s[0].Ann.RetryAfter, s[1].Ann.RetryAfter})
}

// TestHeadersFromJSONLines: fields by their default names, numbers and
// lists as a header carries them, and a nested field named instead.
func TestHeadersFromJSONLines(t *testing.T) {
	text := `{"ts":1.0,"status":200,"x_ratelimit_limit":10,"h":{"policy":["10;w=1","60;w=60"]}}
{"ts":1.1,"status":429,"x_ratelimit_remaining":4}
{"ts":1.2,"status":200}
`
	opt := ReadOptions{HeaderFields: map[Header]string{rlheader.HRateLimitPolicy: "h.policy"}}
	log := readLog(t, "log.jsonl", text, opt)
	assert.Equal(t, 2, log.Answers)
	res := Infer(log.Sends[""], Options{})
	require.NotNil(t, res.Headers)
	var got []string
	for _, a := range res.Headers.Announced {
		got = append(got, fmt.Sprintf("%d/%v %s line %d", a.N, a.Window, a.From.HTTP(), a.FirstLine))
	}
	assert.Equal(t, []string{"10/1s RateLimit-Policy line 1", "60/1m0s RateLimit-Policy line 1", "10/0s X-RateLimit-Limit line 1"}, got)
	assert.Equal(t, 1, res.Headers.RoomRefused)
	assert.Empty(t, res.Headers.Added, "1s and 1m are on the grid already")
}

// TestHeadersReportJSON: the JSON report carries the headers' findings,
// and a log without headers none.
func TestHeadersReportJSON(t *testing.T) {
	log := csvLog(t, headerLog("ratelimit_policy", "0,200,2;w=3", "10,200,2;w=3", "20,200,2;w=3", "30,429,oops"), msUnit)
	var b bytes.Buffer
	require.NoError(t, Run("log.csv", log, Options{}).WriteJSON(&b))
	var out struct {
		Keys []struct {
			Headers *jsonHeaderOut `json:"headers"`
		} `json:"keys"`
		Bad []jsonBad `json:"malformed_headers"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &out))
	h := out.Keys[0].Headers
	require.NotNil(t, h)
	assert.Equal(t, []string{"3s"}, h.Added)
	assert.Equal(t, []jsonPast{{"2/3s", 1, 4}, {"2/3s fixed", 1, 4}}, h.Past)
	assert.Equal(t, []jsonBad{{"RateLimit-Policy", 1, 5, "oops", `"oops" is no count`}}, out.Bad)

	b.Reset()
	require.NoError(t, Run("log.csv", csvLog(t, "ts_ms,status\n0,200\n", msUnit), Options{}).WriteJSON(&b))
	assert.NotContains(t, b.String(), "headers")
}

// TestAnswerNamingALimitTwiceCountsOnce: a policy that names one limit
// many times in one answer counts that answer once.
func TestAnswerNamingALimitTwiceCountsOnce(t *testing.T) {
	policy := strings.Repeat("10;w=1, ", 4999) + "10;w=1"
	log := csvLog(t, headerLog("ratelimit_policy", fmt.Sprintf("1000,200,%q", policy), fmt.Sprintf("2000,200,%q", policy)), msUnit)
	res := Infer(log.Sends[""], Options{})
	require.NotNil(t, res.Headers)
	require.Len(t, res.Headers.Announced, 1)
	assert.Equal(t, 2, res.Headers.Announced[0].Answers, "two answers")
}

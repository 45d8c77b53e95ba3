package serve

import (
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

func TestParseSendTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1700000000123456789", 1700000000123456789, true},
		{"1700000000.123456789", 1700000000123456789, true},
		{"1700000000.5", 1700000000500000000, true},
		{" 1.000000001 ", 1000000001, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.-5", 0, false},
		{"1.1234567891", 0, false},
		{".5", 0, false},
		{"soon", 0, false},
		{"99999999999.0", 0, false}, // past int64 nanoseconds
	} {
		got, ok := parseSendTime(tc.in)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		if tc.ok {
			assert.Equal(t, tc.want, got, "%q", tc.in)
		}
	}
}

func FuzzParseSendTime(f *testing.F) {
	for _, s := range []string{"1700000000123456789", "1.5", "1.", "-1", "9223372036.854775807", "9223372036.854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, ok := parseSendTime(s)
		if !ok {
			return
		}
		assert.GreaterOrEqual(t, ns, int64(0))
		if whole, frac, dot := strings.Cut(strings.TrimSpace(s), "."); dot {
			w, _ := strconv.ParseInt(whole, 10, 64)
			assert.Equal(t, w, ns/int64(time.Second), "%q", s)
			assert.LessOrEqual(t, len(frac), 9)
		}
	})
}

// TestBothViews: a client that kept every window at its send instants
// (2/10s, sent 5 s apart) whose requests arrive together is caught at
// arrival; serve names the requests clean at send and the margin that
// would have covered them, the spread of the logged delays.
func TestBothViews(t *testing.T) {
	opt := Options{Rules: []rule.Rule{{Limit: 2, Window: 10 * time.Second}}, KeyHeader: "K", Record: true}
	r := start(t, opt)
	c := &http.Client{}
	t0 := time.Now().Add(-30 * time.Second).UnixNano()
	sends := []int64{t0, t0 + 5e9, t0 + 10e9, t0 + 15e9, t0}
	for i, at := range sends {
		send := strconv.FormatInt(at, 10)
		if i == 1 {
			send = strconv.FormatInt(at/1e9, 10) + "." + strconv.FormatInt(at%1e9+1e9, 10)[1:] // decimal seconds
		}
		hdr := []string{"K", "a", SendTimeHeader, send, RequestIDHeader, "req-" + strconv.Itoa(i)}
		if i == 4 {
			hdr = hdr[:4] // another key, no id: named by its line
			hdr[1] = "b"
		}
		get(t, c, r.url+"/", hdr...)
	}
	res := r.finish(t)
	rows := readLog(t, r.log)
	_, _, bad := oracle(rows, opt.Rules, opt.Boundary, 0)
	var ids []string
	var delays []int64
	for i, row := range rows {
		delays = append(delays, row.at-sends[i])
		if bad[i] {
			ids = append(ids, "req-"+strconv.Itoa(i))
		}
	}
	require.Equal(t, []string{"req-2", "req-3"}, ids, "the four of key a arrived within 10 s")
	slices.Sort(delays)
	lo, hi := delays[0], delays[4]
	assert.Equal(t, int64(2), res.Violations())
	f, err := os.Open(r.log)
	require.NoError(t, err)
	defer f.Close()
	v, err := BothViews(f, opt.Rules, opt.Boundary, true)
	require.NoError(t, err)
	assert.Equal(t, &Views{
		Requests: 5, Sent: 5, Judged: true, AtArrival: 2, AtSend: 0, CleanAtSend: 2, IDs: ids,
		Min: time.Duration(lo), Max: time.Duration(hi), Spread: time.Duration(hi - lo), P50: time.Duration(delays[2]), P95: time.Duration(hi),
	}, v)
	assert.Contains(t, r.out.String(), "judged at send: 0 requests broke a window, at arrival 2; 2 broke one at arrival and none at send (req-2, req-3)")
	assert.Contains(t, r.out.String(), "A limiter margin of "+time.Duration(hi-lo).String()+" or more")
}

// TestBothViewsNeedsEverySendInstant: with some requests lacking one, the
// delays are given but the send view is not judged.
func TestBothViewsNeedsEverySendInstant(t *testing.T) {
	log := LogHeader + "\n10,a,200,5,4,x\n20,a,200,5,,y\n30,a,200,5,27,\n"
	v, err := BothViews(strings.NewReader(log), []rule.Rule{{Limit: 1, Window: time.Second}}, rule.HalfOpen, true)
	require.NoError(t, err)
	assert.Equal(t, &Views{Requests: 3, Sent: 2, AtArrival: 2, P50: 3, P95: 6, Min: 3, Max: 6, Spread: 3}, v)
	log = LogHeader + "\n10,a,200,5,0,\n20,a,200,5,2000000000,\"a,b\"\n30,a,200,5,4000000000,\n"
	v, err = BothViews(strings.NewReader(log), []rule.Rule{{Limit: 1, Window: time.Second}}, rule.HalfOpen, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"a,b", "line 4"}, v.IDs, "no id: named by its log line")
	v, err = BothViews(strings.NewReader(LogHeader+"\n10,a,200,5,,\n"), nil, rule.HalfOpen, true)
	require.NoError(t, err)
	assert.Nil(t, v, "no send instants: nothing to compare")
	_, err = BothViews(strings.NewReader("ts,key\n"), nil, rule.HalfOpen, true)
	assert.ErrorContains(t, err, "not a request log")
}

// TestBothViewsLeaveOutAbsurdSendInstants: send instants in 2262 and 1970
// would swamp the delays and overflow their spread, printing a negative
// margin; they are left out, counted, and a client clock that runs ahead
// gives delays from the least, never negative ones.
func TestBothViewsLeaveOutAbsurdSendInstants(t *testing.T) {
	rules := []rule.Rule{{Limit: 1, Window: time.Second}}
	at := int64(1_796_054_630_820_663_962)
	log := LogHeader + "\n" + strconv.FormatInt(at, 10) + ",a,200,5,9223372036854775807,x\n" + strconv.FormatInt(at+1, 10) + ",a,200,5,0,y\n"
	v, err := BothViews(strings.NewReader(log), rules, rule.HalfOpen, true)
	require.NoError(t, err)
	assert.Equal(t, &Views{Requests: 2, Absurd: 2}, v)
	var out strings.Builder
	require.NoError(t, v.Write(&out))
	assert.Equal(t, "\nsend instants (X-Send-Time) on 0 of 2 requests (2 send instants more than 24h0m0s from their arrivals left out)\n", out.String())

	log = LogHeader + "\n" + strconv.FormatInt(at, 10) + ",a,200,5," + strconv.FormatInt(at+3e6, 10) + ",x\n" +
		strconv.FormatInt(at+1e6, 10) + ",a,200,5," + strconv.FormatInt(at, 10) + ",y\n" +
		strconv.FormatInt(at+2e6, 10) + ",a,200,5,0,z\n"
	v, err = BothViews(strings.NewReader(log), rules, rule.HalfOpen, true)
	require.NoError(t, err)
	assert.Equal(t, time.Duration(-3e6), v.Min)
	assert.Equal(t, time.Duration(4e6), v.Spread)
	assert.EqualValues(t, 1, v.Absurd)
	out.Reset()
	require.NoError(t, v.Write(&out))
	assert.NotRegexp(t, `-\d`, out.String(), "no negative delay or margin")
	assert.Contains(t, out.String(), "on 2 of 3 requests (1 send instant more than 24h0m0s from its arrival left out)")
	assert.Contains(t, out.String(), "send instants up to 3ms after their arrivals), so the delays are given from the least: p50 0s, p95 4ms, max 4ms; spread (max - min) 4ms")
}

package serve

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestOptionsNowStampsOnTheGivenClock: a server on a clock the caller
// drives stamps and judges each arrival at that clock's instant, and a
// tie is moved past the last stamp so the order stays strict.
func TestOptionsNowStampsOnTheGivenClock(t *testing.T) {
	var at int64
	var log bytes.Buffer
	rules, err := rule.ParseList("2/1s")
	require.NoError(t, err)
	s, err := New(Options{Rules: rules, Log: &log, Now: func() int64 { return at }})
	require.NoError(t, err)
	sec := int64(1e9)
	arrivals := []int64{100 * sec, 100 * sec, 100*sec + 500, 102 * sec}
	var codes []int
	for _, a := range arrivals {
		at = a
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		codes = append(codes, rec.Code)
	}
	require.NoError(t, s.Close())
	assert.Equal(t, []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests, http.StatusOK}, codes,
		"judged on the given clock: the third call finds two in its second, the fourth none")
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")[1:]
	require.Len(t, lines, len(arrivals))
	var stamps []int64
	for _, l := range lines {
		ts, err := strconv.ParseInt(strings.SplitN(l, ",", 2)[0], 10, 64)
		require.NoError(t, err)
		stamps = append(stamps, ts)
	}
	// each answer takes a stamp too: a tie moves 1 ns past the last stamp
	assert.Equal(t, []int64{100 * sec, 100*sec + 2, 100*sec + 500, 102 * sec}, stamps)
}

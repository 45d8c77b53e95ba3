package rule_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// FixedStart and FixedWindow lay out the checker's fixed windows: two sends at one
// instant break a rule of limit 1, and the violation names its window.
func TestFixedStartIsTheCheckersWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	rules := []string{"1/1s fixed", "1/1s fixed at 250ms", "1/1h fixed at 00:30", "1/7s fixed at 3s",
		"1/1d fixed at 00:00 America/New_York", "1/1d fixed at 00:00 Asia/Kolkata", "1/1d fixed at 00:00 America/Havana"}
	// Near the epoch (negative instants too), near DST changes (Havana's
	// clocks skip midnight), and at the int64 range's ends.
	ats := []int64{0, -1, 1, -int64(time.Second), int64(time.Second) - 1, math.MinInt64, math.MaxInt64,
		time.Date(2026, 3, 8, 6, 59, 59, 0, time.UTC).UnixNano(), time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC).UnixNano(),
		time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC).UnixNano(), time.Date(2026, 11, 1, 4, 30, 0, 0, time.UTC).UnixNano()}
	for range 300 {
		ats = append(ats, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()+rng.Int64N(int64(400*24*time.Hour))-int64(30*24*time.Hour))
	}
	for _, text := range rules {
		r, err := rule.Parse(text)
		require.NoError(t, err)
		for _, at := range ats {
			c := checker.New(checker.Config{Rules: []rule.Rule{r}})
			require.NoError(t, c.ObserveCost(at, 1, []int64{}))
			require.NoError(t, c.ObserveCost(at, 2, []int64{}))
			v := c.Report().Rules[0].First
			require.NotNil(t, v, "%s at %d", r, at)
			got, err := r.FixedStart(at)
			require.NoError(t, err)
			assert.Equal(t, v.Span.From, got, "%s at %d", r, at)
			from, to, err := r.FixedWindow(at)
			require.NoError(t, err)
			assert.Equal(t, *v.Span, checker.Span{From: from, To: to}, "%s at %d", r, at)
		}
	}
	_, err := rule.Rule{Limit: 1, Window: time.Second}.FixedStart(0)
	assert.Error(t, err, "a sliding rule has no fixed windows")
}

package logcheck

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimeLogKeepsEveryTime: times added in runs of any length, across
// block boundaries, come back whole and in order.
func TestTimeLogKeepsEveryTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 1, timeBlock - 1, timeBlock, timeBlock + 1, 2*timeBlock + 12345} {
		var l timeLog
		want := make([]int64, 0, total)
		for len(want) < total {
			run := make([]int64, min(total-len(want), 1+rng.IntN(300_000)))
			for i := range run {
				run[i] = int64(len(want) + i)
			}
			l.add(run)
			want = append(want, run...)
		}
		got := l.all()
		require.Len(t, got, total, "%d times kept", total)
		for i, at := range got {
			if at != int64(i) {
				require.Equal(t, int64(i), at, "%d times: time %d", total, i)
			}
		}
		require.Empty(t, l.all(), "all empties the log")
	}
}

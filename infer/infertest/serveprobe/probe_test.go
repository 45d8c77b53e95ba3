package serveprobe

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// TestProbeRecordsBothLogs: serve's log holds every request at its
// arrival, in arrival order, with the status the client got; the delay
// reorders some requests; over loopback TCP the run is the same as in
// process; and every case draws refusals.
func TestProbeRecordsBothLogs(t *testing.T) {
	for _, c := range []Case{{Kind: rule.Sliding}, {Kind: rule.Fixed}, {Kind: rule.Bucket}, {Kind: rule.Sliding, Cost: true}, {Kind: rule.Bucket, Cost: true}} {
		t.Run(c.String(), func(t *testing.T) {
			hidden := Contract(rand.New(rand.NewPCG(3, 30)), c)
			for _, r := range hidden {
				assert.Equal(t, c.Kind, r.Kind)
				assert.Equal(t, c.Cost, r.Unit != "")
			}
			opt := Options{Seed: 3, Budget: 300, MaxDelay: 5 * time.Millisecond}
			run, err := Probe(hidden, opt)
			require.NoError(t, err)
			require.Len(t, run.Calls, opt.Budget)
			served, err := run.ServedLog()
			require.NoError(t, err)
			byArrival := slices.Clone(run.Calls)
			slices.SortStableFunc(byArrival, func(a, b Call) int { return int(a.Arrival - b.Arrival) })
			require.Len(t, served, len(byArrival))
			refused, reordered := 0, 0
			for i, s := range served {
				assert.Equal(t, byArrival[i].Arrival, s.At, "line %d", s.Line)
				assert.Equal(t, byArrival[i].Status == http.StatusTooManyRequests, s.Refused, "line %d", s.Line)
				if s.Refused {
					refused++
				}
			}
			for i := 1; i < len(run.Calls); i++ {
				if run.Calls[i].Arrival < run.Calls[i-1].Arrival {
					reordered++
				}
				assert.Less(t, run.Calls[i-1].Send, run.Calls[i].Send)
			}
			assert.Positive(t, refused, "the probe meets the contract")
			assert.Positive(t, reordered, "the delay reorders some requests")

			opt.Loopback = true
			tcp, err := Probe(hidden, opt)
			require.NoError(t, err)
			assert.Equal(t, run.Calls, tcp.Calls, "over loopback the same")
			assert.Equal(t, string(run.ServeLog), string(tcp.ServeLog))
		})
	}
}

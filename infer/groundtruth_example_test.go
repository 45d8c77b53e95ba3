package infer_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/infer/infertest/serveprobe"
	"github.com/rlcheck/rlcheck/rule"
)

var writeDelayed = flag.Bool("write-delayed", false, "rewrite testdata/infer/delayed.csv")

const delayedPath = "../testdata/infer/delayed.csv"

// TestDelayedExampleLog: the log docs/infer.md infers within a tolerance
// is the client's log of serveprobe's run of 7/1s and 40/10s fixed, with
// up to 5 ms between the client and serve (go test ./infer -run
// TestDelayedExampleLog -write-delayed writes it). No contract fits its
// send instants exactly; within the least spread that fits, the hidden
// one comes back.
func TestDelayedExampleLog(t *testing.T) {
	hidden, err := rule.ParseList("7/1s,40/10s fixed")
	require.NoError(t, err)
	run, err := serveprobe.Probe(hidden, serveprobe.Options{Seed: 2, Budget: 1200, MaxDelay: 5 * time.Millisecond})
	require.NoError(t, err)
	var b bytes.Buffer
	b.WriteString("ts_us,status\n")
	for _, c := range run.Calls {
		fmt.Fprintf(&b, "%d,%d\n", c.Send/int64(time.Microsecond), c.Status)
	}
	if *writeDelayed {
		require.NoError(t, os.WriteFile(delayedPath, b.Bytes(), 0o644))
	}
	shipped, err := os.ReadFile(delayedPath)
	require.NoError(t, err)
	assert.Equal(t, b.String(), string(shipped))

	res := infer.Infer(run.ClientLog(), infer.Options{})
	require.False(t, res.Fits[res.Best].Fits, "no contract fits the send instants exactly")
	require.NotNil(t, res.Tolerance)
	assert.True(t, res.Tolerance.Fits)
	assert.LessOrEqual(t, res.Tolerance.Spread, 5*time.Millisecond)
	u := res.Tolerance.ByReading[infer.RefusedCount]
	assert.True(t, recovered(hidden, u.Fit), "found %s", infer.RulesText(u.Rules))
	t.Logf("spread %v, offset %v (%v..%v), absorbed %d", res.Tolerance.Spread, u.Offset, u.OffsetMin, u.OffsetMax, u.Absorbed)
}

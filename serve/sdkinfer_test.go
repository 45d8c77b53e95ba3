package serve

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/rule"
)

// inferredKey is what a test reads of infer's JSON report of one key.
type inferredKey struct {
	Verdict  string
	Reading  string
	BothFit  bool `json:"both_readings_fit"`
	Contract []struct {
		Rule     string
		WindowNs int64 `json:"window_ns"`
		Kind     string
		Unit     string
		Min      int
		Max      *int
	}
	Headers *struct {
		Announced []struct {
			Limit  int64
			Unit   string
			Header string
		}
		RetryAfters int `json:"retry_afters"`
	}
}

// inferLog runs infer on serve's log as `rlcheck infer --format json
// --cost UNIT...` does, a --cost per unit the rules meter.
func inferLog(t *testing.T, path string, rules []rule.Rule) inferredKey {
	t.Helper()
	open := func() (io.Reader, error) { return os.Open(path) }
	log, err := infer.Read(path, open, infer.ReadOptions{Log: LogReadOptionsFor(rules, false)})
	require.NoError(t, err)
	var out, text bytes.Buffer
	rep := infer.Run(path, log, infer.Options{})
	require.NoError(t, rep.WriteJSON(&out))
	require.NoError(t, rep.WriteText(&text, false))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("infer's report:\n%s", text.String())
		}
	})
	var got struct{ Keys []inferredKey }
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	require.Len(t, got.Keys, 1)
	return got.Keys[0]
}

// assertRecovers: infer's contract names every rule of rules, window,
// kind and unit exact, N in its range, and nothing else.
func assertRecovers(t *testing.T, got inferredKey, rules []rule.Rule, reading rule.Refusals) {
	t.Helper()
	assert.Equal(t, "fits", got.Verdict)
	assert.Equal(t, reading.String(), got.Reading)
	assert.False(t, got.BothFit, "the probe tells the readings apart")
	assert.Len(t, got.Contract, len(rules), "%+v", got.Contract)
	for _, r := range rules {
		found := false
		for _, c := range got.Contract {
			if c.WindowNs == int64(r.Window) && c.Unit == r.Unit && c.Kind == r.Kind.String() {
				found = true
				assert.LessOrEqual(t, c.Min, r.Limit, "%s: %+v", r, c)
				if assert.NotNil(t, c.Max, "%s: no upper bound", r) {
					assert.GreaterOrEqual(t, *c.Max, r.Limit, "%s: %+v", r, c)
				}
			}
		}
		assert.True(t, found, "%s not among %+v", r, got.Contract)
	}
}

// TestInferRecoversThePresets: an SDK, without retries, probes each preset
// in waves timed to pin every rule; infer on serve's log, reading the
// headers the preset sent, names every rule and the reading on refused
// calls, under either reading serve keeps.
func TestInferRecoversThePresets(t *testing.T) {
	node, dir := sdkProject(t)
	t.Parallel()
	for _, c := range []struct {
		p       Provider
		reading rule.Refusals
	}{{OpenAI, rule.RefusedCount}, {Anthropic, rule.RefusedCount}, {AzureOpenAI, rule.RefusedCount}, {OpenAI, rule.RefusedFree}} {
		p := c.p
		t.Run(p.String()+"/"+c.reading.Word(), func(t *testing.T) {
			t.Parallel()
			rules := sdkRules(t, p)
			var seen burstSeen
			var got inferredKey
			// The waves are timed on the real clock: on a loaded machine
			// one may arrive late enough to leave both readings fitting, a
			// probe that tells nothing, not a wrong answer. Such a probe
			// is run again, at most twice.
			for probe := 1; probe <= 3; probe++ {
				r := start(t, Options{Rules: rules, Provider: p, Refusals: c.reading})
				seen = burstSeen{}
				runSDK(t, node, dir, &seen, p.String(), "probe", baseURL(p, r.url))
				r.finish(t)
				if got = inferLog(t, r.log, rules); !got.BothFit {
					break
				}
				t.Logf("probe %d: its log leaves both readings fitting; probing again", probe)
			}
			assertRecovers(t, got, rules, c.reading)
			require.NotNil(t, got.Headers, "the preset's headers are in the log")
			assert.Equal(t, int(seen.Statuses["429"]), got.Headers.RetryAfters)
			t.Logf("%s: %d requests, %d answered 429, %d ms; infer: %+v", p, seen.Sent, seen.Statuses["429"], seen.Elapsed, got.Contract)
		})
	}
}

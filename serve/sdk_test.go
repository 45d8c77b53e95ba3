package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/nodetest"
	"github.com/rlcheck/rlcheck/rule"
)

// The official SDKs (openai, @anthropic-ai/sdk from the npm registry, the
// versions testdata/sdk/package-lock.json pins) run unchanged against the
// presets: testdata/sdk/sdk.mjs drives them with their defaults.

// sdkProject returns node and a directory holding sdk.mjs beside the
// SDKs, installed once per package-lock.json into the user's cache
// (nodetest.Project).
func sdkProject(t *testing.T) (node, dir string) {
	t.Helper()
	return nodetest.Project(t, "this test runs the official SDKs", "testdata/sdk", "openai/package.json")
}

// runSDK runs sdk.mjs and decodes the JSON it prints into out.
func runSDK(t *testing.T, node, dir string, out any, args ...string) {
	t.Helper()
	runNode(t, node, dir, "sdk.mjs", out, args...)
}

// runNode runs script and decodes the JSON it prints into out.
func runNode(t *testing.T, node, dir, script string, out any, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Dir = dir
	b, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("node %v: %v\n%s", args, err, ee.Stderr)
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, out), "%s", b)
}

// sdkRules are a preset's rules at a scale that runs in seconds: 6/1s
// stands for a per-minute request limit.
func sdkRules(t *testing.T, p Provider) []rule.Rule {
	if p == Anthropic {
		return mustRules(t, "6/1s, 600 input_tokens/1s, 600 output_tokens/1s")
	}
	return mustRules(t, "6/1s, 600 tokens/1s")
}

// baseURL is where each SDK is pointed: the OpenAI SDK appends
// /chat/completions, Anthropic's /v1/messages, Azure's client
// /openai/deployments/NAME/chat/completions.
func baseURL(p Provider, url string) string {
	if p == OpenAI {
		return url + "/v1"
	}
	return url
}

// TestSDKsParseThePresets: each official SDK reads the completion's usage
// (whole and streamed), the rate-limit header of its family, and takes a
// 429 for its own RateLimitError with the provider's error type.
func TestSDKsParseThePresets(t *testing.T) {
	node, dir := sdkProject(t)
	t.Parallel() // the SDKs wait on the real clock: each against a serve of its own
	for _, p := range []Provider{OpenAI, Anthropic, AzureOpenAI} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			r := start(t, Options{Rules: sdkRules(t, p), Provider: p})
			var got struct {
				Usage, StreamUsage map[string]int64
				Remaining          string
				Error              struct {
					RateLimitError     bool
					Status             int
					Type, RetryAfter   string
					Code, RetryAfterMs *string
				}
			}
			runSDK(t, node, dir, &got, p.String(), "parse", baseURL(p, r.url))
			want := map[string]int64{"prompt_tokens": 3, "completion_tokens": 8, "total_tokens": 11}
			wantType := "requests"
			if p == Anthropic {
				want, wantType = map[string]int64{"input_tokens": 3, "output_tokens": 8}, "rate_limit_error"
			}
			assert.Equal(t, want, got.Usage, "12 characters of prompt, max_tokens 8")
			assert.Equal(t, want, got.StreamUsage)
			assert.Equal(t, "5", got.Remaining)
			assert.True(t, got.Error.RateLimitError, "%+v", got.Error)
			assert.Equal(t, 429, got.Error.Status)
			assert.Equal(t, wantType, got.Error.Type)
			assert.NotEmpty(t, got.Error.RetryAfter)
			assert.Equal(t, p != Anthropic, got.Error.RetryAfterMs != nil, "retry-after-ms in OpenAI's family only")
			r.finish(t)
		})
	}
}

// burstSeen is what sdk.mjs's burst reports.
type burstSeen struct {
	Sent     int64
	Statuses map[string]int64
	OK       int64 `json:"ok"`
	Failed   int64
	Elapsed  int64 `json:"elapsedMs"`
}

// TestSDKBurstAgrees: a burst of three times the request limit, with the
// SDK's default retries (two, honouring retry-after-ms or retry-after):
// the requests the SDK sent and the 429s it got are the log's, and the
// violations are the same in serve's live metrics, in check on its log
// and in a brute-force count of the log.
func TestSDKBurstAgrees(t *testing.T) {
	node, dir := sdkProject(t)
	t.Parallel()
	for _, p := range []Provider{OpenAI, Anthropic, AzureOpenAI} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			rules := sdkRules(t, p)
			r := start(t, Options{Rules: rules, Provider: p})
			var seen burstSeen
			runSDK(t, node, dir, &seen, p.String(), "burst", baseURL(p, r.url), "18")
			live := liveViolations(t, r.url)
			res := r.finish(t)
			rows := readLog(t, r.log)
			refused := int64(0)
			for _, row := range rows {
				if row.status == http.StatusTooManyRequests {
					refused++
				}
			}
			perRule, _, bad := oracle(rows, rules[:1], rule.HalfOpen, 0)
			badN := int64(0)
			for _, b := range bad {
				if b {
					badN++
				}
			}
			assert.Equal(t, seen.Sent, int64(len(rows)), "every request the SDK sent is in the log")
			assert.Equal(t, seen.Sent, res.Sends)
			assert.Equal(t, seen.Statuses["429"], refused)
			assert.Equal(t, refused, badN, "each 429 is a request that broke the rule")
			assert.Equal(t, perRule[0], res.Violations(), "check on the log and the brute force")
			assert.Equal(t, live, res.Violations(), "serve's live count and check on the log")
			assert.Equal(t, seen.OK+seen.Failed, int64(18))
			t.Logf("%s: 18 calls, %d requests sent, %d answered 429, %d calls failed after the retries, %d ms; violations %d",
				p, seen.Sent, refused, seen.Failed, seen.Elapsed, res.Violations())
		})
	}
}

// liveViolations sums rlcheck_violations_total on serve's /metrics.
func liveViolations(t *testing.T, url string) int64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "rlcheck_violations_total{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			require.NoError(t, err)
			n += int64(v)
		}
	}
	return n
}

// TestClientsInTheField: against the OpenAI preset, a client that paces
// itself on the remaining headers and one that takes one decision over
// both rules get no 429 and break nothing; the common pattern, a
// Bottleneck request limiter chained after a token counter, is caught.
func TestClientsInTheField(t *testing.T) {
	node, dir := sdkProject(t)
	t.Parallel()
	for _, mode := range []string{"paced", "chained", "combined"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := start(t, Options{Rules: sdkRules(t, OpenAI), Provider: OpenAI})
			var seen burstSeen
			runNode(t, node, dir, "clients.mjs", &seen, mode, baseURL(OpenAI, r.url))
			res := r.finish(t)
			assert.Equal(t, seen.Sent-seen.Statuses["400"], res.Sends, "all but the warm-up's 400, unlogged")
			if mode == "chained" {
				assert.Positive(t, seen.Statuses["429"], "two limiters, two decisions: caught")
				assert.Positive(t, res.Violations())
			} else {
				assert.Zero(t, seen.Statuses["429"])
				assert.Zero(t, res.Violations())
			}
			t.Logf("%s: %d requests, %d answered 429, %d ms; violations %d", mode, seen.Sent, seen.Statuses["429"], seen.Elapsed, res.Violations())
		})
	}
}

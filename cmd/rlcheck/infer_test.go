package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/infer/infertest"
	"github.com/rlcheck/rlcheck/rule"
)

// inferred is the part of infer's JSON report these tests read.
type inferred struct {
	Keys []struct {
		Verdict  string
		Rules    string
		Contract []struct {
			Rule     string
			WindowNs int64 `json:"window_ns"`
			Kind     string
			Min      int
			Max      *int
		}
		Unexplained []struct{ Line, Tightest int64 } `json:"unexplained"`
	}
}

// TestInferFindsSevenAndForty: a log from a provider holding 7/1s and
// 40/10s (sliding, refused calls counted), read as ts_ms,status, names a
// 1s rule whose range holds 7 and a 10s rule whose range holds 40; the
// rules it prints are usable as --rules, and the accepted calls keep them.
func TestInferFindsSevenAndForty(t *testing.T) {
	hidden, err := rule.ParseList("7/1s,40/10s")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 40))
	calls := infertest.Replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, hidden[0], 4000))
	dir := t.TempDir()
	logPath, acceptedPath := filepath.Join(dir, "log.csv"), filepath.Join(dir, "accepted.txt")
	f, err := os.Create(logPath)
	require.NoError(t, err)
	require.NoError(t, infertest.WriteCSV(f, calls))
	require.NoError(t, f.Close())
	var accepted strings.Builder
	for _, c := range calls {
		if !c.Refused {
			accepted.WriteString(strconv.FormatInt(c.At, 10) + "\n")
		}
	}
	require.NoError(t, os.WriteFile(acceptedPath, []byte(accepted.String()), 0o644))

	out, stderr, code := run(t, "", "infer", "--format", "json", logPath)
	require.Equal(t, 0, code, stderr)
	var rep inferred
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Keys, 1)
	k := rep.Keys[0]
	assert.Equal(t, "fits", k.Verdict)
	for _, h := range hidden {
		found := false
		for _, r := range k.Contract {
			if r.WindowNs == int64(h.Window) && r.Kind == "sliding" {
				found = true
				require.NotNil(t, r.Max, "%s: a refused call bounds it", r.Rule)
				assert.True(t, r.Min <= h.Limit && h.Limit <= *r.Max, "%s: [%d, %d] holds %d", r.Rule, r.Min, *r.Max, h.Limit)
			}
		}
		assert.True(t, found, "a %v rule among %+v", h.Window, k.Contract)
	}
	_, err = rule.ParseList(k.Rules)
	require.NoError(t, err, "the rules read back as --rules")
	_, stderr, code = run(t, "", "check", "--rules", k.Rules, "--unit", "ns", acceptedPath)
	assert.Equal(t, 0, code, "the accepted calls keep the inferred rules: %s", stderr)
}

// TestInferContradiction: a refusal no rule on the grid explains exits 1
// and names the refused line and the accepted one that contradicts it.
func TestInferContradiction(t *testing.T) {
	day := int64(24 * time.Hour / time.Millisecond)
	p := filepath.Join(t.TempDir(), "log.csv")
	require.NoError(t, os.WriteFile(p, []byte("ts_ms,status\n0,200\n1,200\n2,200\n"+strconv.FormatInt(3*day, 10)+",429\n"), 0o644))
	out, _, code := run(t, "", "infer", "--unit", "ms", p)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "line 5 at 259200.000000000 s was refused with 0 earlier calls in its 1s sliding window; line 4 was accepted with 2 in its own")
	out, _, code = run(t, "", "infer", "--unit", "ms", "--format", "json", p)
	assert.Equal(t, 1, code)
	var rep inferred
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "contradiction", rep.Keys[0].Verdict)
	assert.Equal(t, int64(5), rep.Keys[0].Unexplained[0].Line)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	out, _, code = run(t, string(data), "infer", "--unit", "ms", "-")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "<stdin>: 4 calls")
	assert.Contains(t, out, "line 5 at 259200.000000000 s was refused")
}

// TestInferBadInput: a bad status, a log without statuses and a bad flag
// exit 2 with a message naming the place.
func TestInferBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("ts,status\n1,200\n2,maybe\n"), 0o644))
	plain := filepath.Join(dir, "plain.txt")
	require.NoError(t, os.WriteFile(plain, []byte("1\n2\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"infer", bad}, bad + `:3: status "maybe": not an HTTP status code (100 to 599): "2,maybe"`},
		{[]string{"infer", plain}, "--status-col"},
		{[]string{"infer", "--format", "xml", bad}, `--format "xml"`},
		{[]string{"infer"}, "accepts 1 arg"},
	} {
		_, stderr, code := run(t, "", c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// TestInferExampleLog: the logs docs/infer.md infers are the provider's
// replay of 7/1s and 40/10s, and its first 20 calls (go test -run TestInferExampleLog -update
// writes it).
func TestInferExampleLog(t *testing.T) {
	hidden, err := rule.ParseList("7/1s,40/10s")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	calls := infertest.Replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, hidden[0], 1200))
	var b strings.Builder
	require.NoError(t, infertest.WriteCSV(&b, calls))
	lines := strings.SplitAfter(b.String(), "\n")
	for path, want := range map[string]string{
		"../../testdata/infer/calls.csv": b.String(),
		"../../testdata/infer/short.csv": strings.Join(lines[:21], ""), // the first 20 calls
	} {
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		}
		shipped, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, want, string(shipped), path)
	}
}

// docInfer mirrors infer's JSON report as docs/json.md describes it.
type docInfer struct {
	docHeader
	File          string `json:"file"`
	Calls         int    `json:"calls"`
	OtherStatuses int    `json:"other_statuses"`
	Keys          []struct {
		Key      string `json:"key"`
		Calls    int    `json:"calls"`
		Accepted int    `json:"accepted"`
		Refused  int    `json:"refused"`
		FirstNs  int64  `json:"first_ns"`
		LastNs   int64  `json:"last_ns"`
		Verdict  string `json:"verdict"`
		Reading  string `json:"reading"`
		BothFit  bool   `json:"both_readings_fit"`
		Rules    string `json:"rules"`
		Smallest bool   `json:"smallest"`
		Contract []struct {
			Rule       string   `json:"rule"`
			WindowNs   int64    `json:"window_ns"`
			Kind       string   `json:"kind"`
			Unit       string   `json:"unit"`
			Min        int      `json:"min"`
			Max        *int     `json:"max"`
			Explains   int      `json:"explains"`
			MinPins    int      `json:"min_pinned_by"`
			Tightest   int64    `json:"tightest_accepted_line"`
			MaxPins    int      `json:"max_pinned_by"`
			Closest    int64    `json:"closest_refused_line"`
			Confidence float64  `json:"confidence"`
			AlsoFits   []string `json:"also_fits"`
			Burst      int      `json:"burst"`
			RateMin    int64    `json:"rate_min_per_day"`
			RateMax    int64    `json:"rate_max_per_day"`
			RateOpen   bool     `json:"rate_open"`
			Outer      bool     `json:"outer"`
			Advice     string   `json:"advice"`
		} `json:"contract"`
		OtherReading struct {
			Reading string `json:"reading"`
			Fits    bool   `json:"fits"`
			Rules   string `json:"rules"`
		} `json:"other_reading"`
		Unexplained []struct {
			Line     int64  `json:"line"`
			AtNs     int64  `json:"at_ns"`
			Window   string `json:"window"`
			Kind     string `json:"kind"`
			Before   int    `json:"before"`
			Tightest int64  `json:"tightest_accepted_line"`
			AtLeast  int    `json:"at_least"`
		} `json:"unexplained"`
		UnexplainedTotal int `json:"unexplained_total"`
		Windows          []struct {
			Window   string `json:"window"`
			WindowNs int64  `json:"window_ns"`
			Kind     string `json:"kind"`
			Unit     string `json:"unit"`
			Reading  string `json:"reading"`
			AtLeast  int    `json:"at_least"`
			Explains int    `json:"explains"`
			Steps    int64  `json:"steps"`
		} `json:"windows"`
		BucketSteps int64 `json:"bucket_steps"`
		Headers     *struct {
			Answers   int `json:"answers"`
			Announced []struct {
				Limit     int64  `json:"limit"`
				WindowNs  int64  `json:"window_ns"`
				Unit      string `json:"unit"`
				Header    string `json:"header"`
				Answers   int    `json:"answers"`
				FirstLine int64  `json:"first_line"`
			} `json:"announced"`
			Added       []string `json:"windows_added"`
			RetryAfters int      `json:"retry_afters"`
			RetryMinNs  int64    `json:"retry_after_min_ns"`
			RetryMaxNs  int64    `json:"retry_after_max_ns"`
			Reading     string   `json:"reading"`
			RoomRefused int      `json:"refused_with_remaining"`
			RoomLine    int64    `json:"first_refused_with_remaining_line"`
			Past        []struct {
				Rule      string `json:"rule"`
				Accepted  int    `json:"accepted"`
				FirstLine int64  `json:"first_line"`
			} `json:"accepted_past_limit"`
		} `json:"headers"`
		Declared *struct {
			Rules           string `json:"rules"`
			Reading         string `json:"reading"`
			Looser          bool   `json:"looser"`
			Allowed         int    `json:"refused_calls_it_allows"`
			AllowedLine     int64  `json:"first_refused_call_it_allows_line"`
			Stricter        bool   `json:"stricter"`
			Refused         int    `json:"accepted_calls_it_refuses"`
			RefusedLine     int64  `json:"first_accepted_call_it_refuses_line"`
			ConsistentRules string `json:"consistent_rules"`
			PerRule         []struct {
				Rule    string `json:"rule"`
				Kind    string `json:"kind"`
				Unit    string `json:"unit"`
				AtLeast int    `json:"provider_allows_at_least"`
				Unused  int    `json:"left_unused"`
				Refuses int    `json:"accepted_calls_it_refuses"`
			} `json:"per_rule"`
		} `json:"declared"`
		Tolerance *struct {
			SpreadNs      int64           `json:"spread_ns"`
			Fits          bool            `json:"fits"`
			Reading       string          `json:"reading"`
			Rules         string          `json:"rules"`
			Contract      json.RawMessage `json:"contract"` // as the key's own
			OffsetMatters bool            `json:"offset_matters"`
			OffsetNs      int64           `json:"offset_ns"`
			OffsetMinNs   int64           `json:"offset_min_ns"`
			OffsetMaxNs   int64           `json:"offset_max_ns"`
			Absorbed      int             `json:"absorbed_calls"`
			Unexplained   int             `json:"unexplained_refusals"`
			Calls         int             `json:"calls"`
			Simpler       bool            `json:"simpler"`
			BucketsNs     int64           `json:"bucket_ranges_spread_ns"`
			DelayNs       int64           `json:"delay_ns"`
		} `json:"tolerance"`
	} `json:"keys"`
	MalformedHeaders []struct {
		Header    string `json:"header"`
		Count     int    `json:"count"`
		FirstLine int64  `json:"first_line"`
		Text      string `json:"text"`
		Error     string `json:"error"`
	} `json:"malformed_headers"`
}

// TestInferHeaders: the example log's headers announce 5/3s; infer adds
// 3s to the grid, finds the 6/3s the provider holds, and names the calls
// it accepted past its announcement and the header that did not parse.
func TestInferHeaders(t *testing.T) {
	out, stderr, code := run(t, "", "infer", "--format", "json", "../../testdata/infer/headers.csv")
	require.Equal(t, 0, code, stderr)
	var rep docInfer
	decodeStrict(t, out, &rep)
	k := rep.Keys[0]
	assert.Equal(t, "6/3s", k.Rules)
	require.NotNil(t, k.Headers)
	assert.Equal(t, []string{"3s"}, k.Headers.Added)
	require.Len(t, k.Headers.Announced, 1)
	assert.Equal(t, int64(5), k.Headers.Announced[0].Limit)
	require.Len(t, k.Headers.Past, 2)
	assert.Equal(t, "5/3s", k.Headers.Past[0].Rule)
	assert.Positive(t, k.Headers.Past[0].Accepted)
	require.Len(t, rep.MalformedHeaders, 1)
	assert.Equal(t, "RateLimit-Policy", rep.MalformedHeaders[0].Header)

	_, stderr, code = run(t, "", "infer", "--header-col", "nope=x", "../../testdata/infer/headers.csv")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--header-col nope=x: no header "nope"`)
	out, stderr, code = run(t, "", "infer", "--header-col", "ratelimit_policy=", "../../testdata/infer/headers.csv")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "Announced")
}

// TestInferPerKey: with --key-col, each tenant's calls get their own
// contract: tenant a's provider keeps 3/1s, b's 10/1s; the log interleaves
// them with other statuses.
func TestInferPerKey(t *testing.T) {
	var b strings.Builder
	b.WriteString("ts_ms,tenant,status\n")
	var rows []string
	for i, tenant := range []string{"a", "b"} {
		limit := []int{3, 10}[i]
		hidden := []rule.Rule{{Limit: limit, Window: time.Second}}
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		for _, c := range infertest.Replay(infertest.NewProvider(hidden, true), infertest.Traffic(rng, hidden[0], 800)) {
			st := "200"
			if c.Refused {
				st = "429"
			}
			rows = append(rows, strconv.FormatInt(c.At/int64(time.Millisecond), 10)+","+tenant+","+st)
		}
	}
	rows = append(rows, rows[0][:strings.LastIndex(rows[0], ",")]+",503")
	slices.Sort(rows) // interleaved by time (equal times: a before b)
	b.WriteString(strings.Join(rows, "\n") + "\n")
	p := filepath.Join(t.TempDir(), "log.csv")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))

	out, stderr, code := run(t, "", "infer", "--key-col", "tenant", "--format", "json", p)
	require.Equal(t, 0, code, stderr)
	var rep docInfer
	decodeStrict(t, out, &rep)
	assert.Equal(t, 1, rep.OtherStatuses)
	require.Len(t, rep.Keys, 2)
	for i, k := range rep.Keys {
		assert.Equal(t, []string{"a", "b"}[i], k.Key)
		assert.Equal(t, 800, k.Calls)
		require.NotEmpty(t, k.Contract, k.Key)
		r := k.Contract[0]
		assert.Equal(t, int64(time.Second), r.WindowNs, k.Key)
		require.NotNil(t, r.Max)
		limit := []int{3, 10}[i]
		assert.True(t, r.Min <= limit && limit <= *r.Max, "%s: [%d, %d] holds %d", k.Key, r.Min, *r.Max, limit)
	}
}

// TestInferWritesContract: --write-contract writes the inferred rules as a
// contract file that check and infer read back, and infer against that
// contract finds it consistent with the log (exit 0), against a looser one
// exits 1; a log without a 429 has no contract to write (exit 2).
func TestInferWritesContract(t *testing.T) {
	path := filepath.Join(t.TempDir(), "api.yaml")
	_, stderr, code := run(t, "", "infer", "--write-contract", path, "../../testdata/infer/calls.csv")
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "rules: [7/1s, 40/10s]")
	out, stderr, code := run(t, "", "infer", "--contract", path, "../../testdata/infer/calls.csv")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "consistent with the log")
	out, _, code = run(t, "", "infer", "--rules", "9/1s,40/10s", "../../testdata/infer/calls.csv")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "LOOSER than the provider's")
	_, stderr, code = run(t, "", "infer", "--write-contract", path, "../../testdata/infer/quiet.csv")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no contract to write")
}

// TestInferDeclaredCostsAndBuckets: a declared cost rule and a declared
// token bucket are set beside the log as call windows are: exit 1 when the
// contract allows calls the provider refused, 0 when it is only stricter;
// the costs of a declared rule's unit are read from the column named as the
// unit without --cost, and a log without it is an error naming --cost (2).
func TestInferDeclaredCostsAndBuckets(t *testing.T) {
	costs, bucket := "../../testdata/infer/costs.csv", "../../testdata/infer/bucket.csv"
	out, stderr, code := run(t, "", "infer", "--cost", "tokens", "--rules", "6/1s,1200 tokens/10s", costs)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, out, "LOOSER than the provider's")
	assert.Regexp(t, `1200 tokens/10s +1000 tokens +0 tokens +0\n`, out)
	out, stderr, code = run(t, "", "infer", "--cost", "tokens", "--rules", "6/1s,800 tokens/10s", costs)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "stricter than needed")
	assert.Regexp(t, `800 tokens/10s +1000 tokens +200 tokens +[1-9]`, out)
	out, stderr, code = run(t, "", "infer", "--rules", "6/1s,1200 tokens/10s", costs)
	assert.Equal(t, 1, code, stderr)
	assert.Regexp(t, `1200 tokens/10s +1000 tokens +0 tokens +0\n`, out, "the declared unit read from its column without --cost")
	_, stderr, code = run(t, "", "infer", "--rules", "1000 tokens/10s", "../../testdata/infer/calls.csv")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `calls.csv:1: --cost tokens=tokens: no column named "tokens" in the header`)

	out, stderr, code = run(t, "", "infer", "--rules", "4/1s burst 10", bucket)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, out, "LOOSER than the provider's")
	out, stderr, code = run(t, "", "infer", "--rules", "4/1s burst 6", "--format", "json", bucket)
	assert.Equal(t, 0, code, stderr)
	var rep docInfer
	decodeStrict(t, out, &rep)
	require.Len(t, rep.Keys, 1)
	d := rep.Keys[0].Declared
	require.NotNil(t, d)
	assert.False(t, d.Looser)
	assert.True(t, d.Stricter)
	require.Len(t, d.PerRule, 1)
	r := d.PerRule[0]
	assert.Equal(t, "4/1s burst 6", r.Rule)
	assert.Equal(t, "bucket", r.Kind)
	assert.Equal(t, 8, r.AtLeast, "the log was replayed through 4/1s burst 8")
	assert.Equal(t, 2, r.Unused)
	assert.Positive(t, r.Refuses)
}

// TestInferDelay: --delay reports the contract that fits within the
// delay given, exit 0, and writes it with --write-contract; a bad or
// negative delay is refused with exit 2, naming the flag.
func TestInferDelay(t *testing.T) {
	const log = "../../testdata/infer/delayed.csv"
	_, _, code := run(t, "", "infer", log)
	assert.Equal(t, 1, code, "no delay given: a contradiction")

	out, stderr, code := run(t, "", "infer", "--delay", "5ms", log)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "WITHIN THE 5ms DELAY GIVEN")
	assert.Contains(t, out, "rules within a 5ms tolerance: 7/1s,40/10s fixed")
	assert.NotContains(t, out, "CONTRADICTION")

	out, _, code = run(t, "", "infer", "--delay", "1ms", log)
	assert.Equal(t, 1, code, "more than the delay given is a contradiction")
	assert.Contains(t, out, "more than the 1ms delay given")

	path := filepath.Join(t.TempDir(), "c.yaml")
	_, stderr, code = run(t, "", "infer", "--delay", "5ms", "--write-contract", path, log)
	require.Equal(t, 0, code, stderr)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(written), "within a 5ms delay")
	assert.Contains(t, string(written), "40/10s fixed")

	for _, bad := range []struct{ value, says string }{
		{"soon", `invalid argument "soon" for "--delay" flag`},
		{"5", `invalid argument "5" for "--delay" flag`},
		{"-2ms", "--delay -2ms: want a delay from 0 to 24h0m0s"},
		{"25h", "--delay 25h0m0s: want a delay from 0 to 24h0m0s"},
	} {
		_, stderr, code := run(t, "", "infer", "--delay", bad.value, log)
		assert.Equal(t, 2, code, bad.value)
		assert.Contains(t, stderr, bad.says, bad.value)
	}
}

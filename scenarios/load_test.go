package scenarios

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/workload"
)

func TestShippedScenariosLoad(t *testing.T) {
	names := Names()
	want := []string{"api-contract", "cancellation", "clock-skew", "fleet", "gate-order", "llm-api", "llm-settle", "long-window", "provider-bucket", "provider-edge", "provider-fixed", "seed"}
	require.Equal(t, want, names)
	for _, n := range names {
		s, err := Shipped(n)
		require.NoError(t, err)
		assert.Equal(t, n, s.Name)
		assert.NotEmpty(t, s.Description, n)
		f, err := Load("../scenarios/" + n + ".yaml")
		if assert.NoError(t, err, "Load(%s.yaml)", n) {
			assert.Equal(t, n, f.Name)
		}
	}
}

func TestEmpiricalReadsBesideTheScenario(t *testing.T) {
	y := "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nlateness: empirical(late.txt)\nsend_delay: empirical(late.txt)\n"
	s, err := Parse("e.yaml", []byte(y), files)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, s.Lateness.Samples.D)
	assert.Equal(t, "empirical(late.txt)", s.SendDelay[0].String())
	_, err = Parse("e.yaml", []byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nop_cost: empirical(ok.txt)\n"), files)
	assert.EqualError(t, err, `e.yaml:4: op_cost: distribution "empirical(ok.txt)": ok.txt:1: "1.0" is not a duration such as 250us, 3ms or 1s`)
}

func TestSendPathFields(t *testing.T) {
	y := "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nworkers: 2\nsend_delay:\n  - 2ms\n  - uniform(1ms, 3ms)\nredis_rtt: 500us\nmargin: 2ms\n"
	s, err := Parse("p.yaml", []byte(y), noFiles)
	require.NoError(t, err)
	assert.Equal(t, []workload.Dist{{A: 2 * time.Millisecond}, {Kind: workload.Uniform, A: time.Millisecond, B: 3 * time.Millisecond}}, s.SendDelay)
	assert.Equal(t, workload.Dist{A: 500 * time.Microsecond}, s.RedisRTT)
	assert.Equal(t, 2*time.Millisecond, s.Margin)
	assert.True(t, s.HasSendPath())

	s, err = Parse("p.yaml", []byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nsend_delay: exponential(1ms)\n"), noFiles)
	require.NoError(t, err)
	assert.Equal(t, []workload.Dist{{Kind: workload.Exponential, A: time.Millisecond}}, s.SendDelay, "one for every worker")

	for y, want := range map[string]string{
		"workers: 3\nsend_delay: [1ms, 2ms]\n": "p.yaml:5: send_delay: 2 distributions for 3 workers; give one, or one per worker",
		"margin: -1ms\n":                       "p.yaml:4: margin: must not be negative",
		"redis_rtt: lognormal(1ms)\n":          `p.yaml:4: redis_rtt: distribution "lognormal(1ms)": takes a median and a sigma`,
	} {
		_, err := Parse("p.yaml", []byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\n"+y), noFiles)
		assert.EqualError(t, err, want)
	}
}

func noFiles(string) (io.ReadCloser, error) { return nil, errors.New("no files here") }

// files opens the replayed logs the table tests name.
func files(name string) (io.ReadCloser, error) {
	logs := map[string]string{
		"ok.txt":   "1.0\n1.5\n",
		"long.txt": "1.0\n" + strings.Repeat("9", 5000) + "x\n",
		"wide.txt": "1.0\n" + strings.Repeat("1", 70_000) + "\n",
		"late.txt": "1ms\n2ms\n",
	}
	if l, ok := logs[name]; ok {
		return io.NopCloser(strings.NewReader(l)), nil
	}
	return nil, errors.New("no files here")
}

func TestStrictDecodingNamesFieldLineAndFile(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown top-level field", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ncalers: 4\n",
			`my.yaml:4: unknown field "calers"`},
		{"unknown nested field", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\narrivals:\n  pattern: interval\n  evry: 1s\n",
			`my.yaml:6: unknown field "evry"`},
		{"bad rule", "rules: [5/1s, 5/potato]\nstrategies: [combined]\ncallers: 3\n",
			`my.yaml:1: rules: rule "5/potato"`},
		{"bad distribution", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nlateness: uniform(3ms, 1ms)\n",
			`my.yaml:4: lateness: distribution "uniform(3ms, 1ms)": maximum is below minimum`},
		{"bad duration", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ntimeout: soon\n",
			`my.yaml:4: timeout: "soon" is not a duration`},
		{"bad pattern", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\narrivals: {pattern: burst}\n",
			`my.yaml:4: arrivals: unknown pattern "burst"`},
		{"wrong type", "rules: [5/1s]\nstrategies: [combined]\ncallers: many\n",
			`my.yaml:3: callers: want a whole number`},
		{"unknown strategy", "rules: [5/1s]\nstrategies: [fastest]\ncallers: 3\n",
			`my.yaml: scenario "my": unknown strategy "fastest"`},
		{"slots needed", "rules: [5/1s]\nstrategies: [gated]\ncallers: 3\n",
			`my.yaml: scenario "my": strategy gated needs max_in_flight`},
		{"replay file missing", "rules: [5/1s]\nstrategies: [combined]\narrivals: {pattern: replay, file: x.txt}\n",
			`my.yaml:3: arrivals.file: no files here`},
		{"callers beside a replayed log", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\narrivals: {pattern: replay, file: ok.txt}\n",
			`my.yaml:3: callers: a replayed log sets the callers (one per line); remove callers`},
		{"fewer skews than workers", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nworkers: 4\nskew: [0s, 2ms]\n",
			`my.yaml:5: skew: 2 offsets for 4 workers; give one per worker`},
		{"more skews than workers", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nworkers: 1\nskew: [0s, 2ms]\n",
			`my.yaml:5: skew: 2 offsets for 1 workers; give one per worker`},
		{"a bad replayed line is quoted short", "rules: [5/1s]\nstrategies: [combined]\narrivals: {pattern: replay, file: long.txt}\n",
			`long.txt:2: "` + strings.Repeat("9", 80) + `"... (5001 bytes) is not decimal seconds`},
		{"a replayed line too long to read", "rules: [5/1s]\nstrategies: [combined]\narrivals: {pattern: replay, file: wide.txt}\n",
			`wide.txt:2: line longer than 64 KiB: not a send log`},
		{"a file too large", "rules: [5/1s]\nstrategies: [combined]\ncallers: 3\n#" + strings.Repeat("x", 1<<20),
			`my.yaml: larger than 1024 KiB: a scenario file is a short YAML description`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("my.yaml", []byte(tt.yaml), files)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.want, err.Error()[:min(len(tt.want), len(err.Error()))])
			// The list of known strategies grows with the table; it is no excerpt.
			msg, _, _ := strings.Cut(err.Error(), " (known: ")
			assert.Less(t, len(msg), 300, "an error quotes a short excerpt")
		})
	}
}

// TestHugeLimitsRun pins a crash: a limit near 2^63 or past 2^31 must
// neither panic nor allocate by the limit.
func TestHugeLimitsRun(t *testing.T) {
	for _, r := range []string{"9223372036854775807/1s", "2147483648/1s"} {
		t.Run(r, func(t *testing.T) {
			y := "rules: [" + r + "]\nstrategies: [sequential, combined, gated, combined-counter]\nmax_in_flight: 2\ncallers: 50\n"
			s, err := Parse("huge.yaml", []byte(y), noFiles)
			require.NoError(t, err)
			// The strategies' logs and the checker's history both grow with
			// the sends, not with the limit.
			res, err := simulate.Run(&s.Scenario, simulate.Options{})
			require.NoError(t, err)
			for _, st := range res.Strategies {
				assert.Len(t, st.Sends, 50, st.Name)
				assert.Zero(t, st.Violations(), st.Name)
			}
		})
	}
}

func TestReplayReadsACheckableLog(t *testing.T) {
	y := "rules: [2/1s]\nstrategies: [combined]\narrivals: {pattern: replay, file: log.txt}\n"
	open := func(string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("# a recorded log\n10.5\n10.500000001\n\n10.9\n")), nil
	}
	s, err := Parse("r.yaml", []byte(y), open)
	require.NoError(t, err)
	require.Equal(t, []int64{10_500_000_000, 10_500_000_001, 10_900_000_000}, s.Arrivals.Times)
	r, err := simulate.Run(&s.Scenario, simulate.Options{})
	require.NoError(t, err)
	// Arrivals start at 0; the third, at 0.4 s, waits for the first to leave.
	require.Equal(t, []int64{0, 1, int64(time.Second)}, r.Strategies[0].Sends)
}

func TestParseSeconds(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false}, {"7.005153000", 7_005_153_000, false}, {"7.005153", 7_005_153_000, false},
		{".5", 500_000_000, false}, {"3.", 3_000_000_000, false}, {"1.0000000001", 0, true},
		{"-1", 0, true}, {"1e3", 0, true}, {".", 0, true}, {"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSeconds(tt.in)
		assert.Equal(t, tt.err, err != nil, "ParseSeconds(%q): %v", tt.in, err)
		assert.Equal(t, tt.want, got, "ParseSeconds(%q)", tt.in)
	}
}

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"0", "7.005153000", ".5", "1.", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseSeconds(s)
		if err != nil {
			return
		}
		var b strings.Builder
		require.NoError(t, simulate.WriteLog(&b, []int64{ns}))
		back, err := ParseSeconds(strings.TrimSpace(b.String()))
		require.NoError(t, err)
		require.Equal(t, ns, back, "%q -> %q", s, b.String())
	})
}

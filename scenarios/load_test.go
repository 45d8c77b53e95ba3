package scenarios

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/simulate"
)

func TestShippedScenariosLoad(t *testing.T) {
	names := Names()
	want := []string{"api-contract", "cancellation", "clock-skew", "fleet", "gate-order", "long-window", "seed"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("shipped %v, want %v", names, want)
	}
	for _, n := range names {
		s, err := Shipped(n)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != n || s.Description == "" {
			t.Errorf("%s: name %q, description %q", n, s.Name, s.Description)
		}
		if f, err := Load("../scenarios/" + n + ".yaml"); err != nil || f.Name != n {
			t.Errorf("Load(%s.yaml): %v", n, err)
		}
	}
}

func noFiles(string) (io.ReadCloser, error) { return nil, errors.New("no files here") }

// files opens the replayed logs the table tests name.
func files(name string) (io.ReadCloser, error) {
	logs := map[string]string{
		"ok.txt":   "1.0\n1.5\n",
		"long.txt": "1.0\n" + strings.Repeat("9", 5000) + "x\n",
		"wide.txt": "1.0\n" + strings.Repeat("1", 70_000) + "\n",
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
			assert.Less(t, len(err.Error()), 300, "an error quotes a short excerpt")
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
			// The strategies cope (strategies.TestSlidingLogHugeLimitCostsItsCalls);
			// checker.Check still panics (2^63-1) or exhausts memory (2^31)
			// on such limits, and its fix is a separate change.
			if os.Getenv("RLCHECK_HUGE_LIMITS") == "" {
				t.Skip("checker.Check cannot take these limits yet; RLCHECK_HUGE_LIMITS=1 runs it")
			}
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
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{10_500_000_000, 10_500_000_001, 10_900_000_000}
	if len(s.Arrivals.Times) != 3 || s.Arrivals.Times[1] != want[1] || s.Arrivals.Times[2] != want[2] {
		t.Fatalf("times %v, want %v", s.Arrivals.Times, want)
	}
	r, err := simulate.Run(&s.Scenario, simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Arrivals start at 0; the third, at 0.4 s, waits for the first to leave.
	if got := r.Strategies[0].Sends; len(got) != 3 || got[1] != 1 || got[2] != int64(time.Second) {
		t.Fatalf("sends %v", got)
	}
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
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSeconds(%q) = %d, %v", tt.in, got, err)
		}
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
		if err := simulate.WriteLog(&b, []int64{ns}); err != nil {
			t.Fatal(err)
		}
		back, err := ParseSeconds(strings.TrimSpace(b.String()))
		if err != nil || back != ns {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, ns, b.String(), back, err)
		}
	})
}

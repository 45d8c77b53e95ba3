package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

func TestLoadExample(t *testing.T) {
	c, err := Load("../../testdata/contracts/api.yaml")
	require.NoError(t, err)
	want := Contract{
		Name: "example-api",
		Rules: []rule.Rule{
			{Limit: 10, Window: time.Second},
			{Limit: 500, Window: time.Minute},
			{Limit: 10000, Window: 24 * time.Hour},
		},
		MaxInFlight: 4,
		Boundary:    rule.HalfOpen,
	}
	assert.Equal(t, want, c)
}

func TestParse(t *testing.T) {
	r := func(s string) rule.Rule {
		p, err := rule.Parse(s)
		require.NoError(t, err)
		return p
	}
	tests := []struct {
		name string
		yaml string
		want Contract
	}{
		{"flow list", "rules: [5/1s, 12/3s]\n", Contract{Rules: []rule.Rule{r("5/1s"), r("12/3s")}}},
		{"one string", "rules: 10/s, 500/min\n", Contract{Rules: []rule.Rule{r("10/s"), r("500/min")}}},
		{"bookkeeping", "rules: [10/s:exact, 10000/day:b96]\n", Contract{Rules: []rule.Rule{r("10/s:exact"), r("10000/day:b96")}}},
		{"costs and kinds", "rules:\n  - 90000 tokens/1m\n  - 90000/1m\n  - 5000/1h fixed\n  - 10000/1d fixed at 00:00 America/New_York\n  - 10/1s burst 20\n  - 100/1m first-call\n",
			Contract{Rules: []rule.Rule{r("90000 tokens/1m"), r("90000/1m"), r("5000/1h fixed"), r("10000/1d fixed at 00:00 America/New_York"), r("10/1s burst 20"), r("100/1m first-call")}}},
		{"cap alone", "max_in_flight: 8\n", Contract{MaxInFlight: 8}},
		{"closed", "rules: [5/1s]\nboundary: closed\n", Contract{Rules: []rule.Rule{r("5/1s")}, Boundary: rule.Closed}},
		{"null fields are unset", "name:\nrules: [5/1s]\nmax_in_flight: ~\nboundary: null\n", Contract{Rules: []rule.Rule{r("5/1s")}}},
		{"numeric name", "name: 42\nrules: [5/1s]\n", Contract{Name: "42", Rules: []rule.Rule{r("5/1s")}}},
		{"comments and document start", "---\n# limits\nrules:\n  - 5/1s # per second\n", Contract{Rules: []rule.Rule{r("5/1s")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse("c.yaml", []byte(tt.yaml))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // the whole message
	}{
		{"empty", "", "c.yaml: empty contract: want name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field"},
		{"comments only", "# nothing\n", "c.yaml: empty contract: want name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field"},
		{"nothing to check", "name: x\n", "c.yaml: no rules and no max_in_flight: a contract needs at least one"},
		{"unknown field", "name: x\nrules: [5/1s]\nmax_inflight: 4\n", `c.yaml:3: unknown field "max_inflight": want name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field`},
		{"field twice", "rules: [5/1s]\nrules: [6/1s]\n", `c.yaml:2: field "rules" given twice (first at line 1)`},
		{"not a mapping", "- 5/1s\n", "c.yaml:1: want a mapping of name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field"},
		{"syntax", "rules: [5/1s\n", "c.yaml:1: did not find expected ',' or ']'"},
		{"bad rule", "rules:\n  - 5/1s\n  - 12 per 3s\n", `c.yaml:3: rules[1]: rule "12 per 3s": want LIMIT/WINDOW, for example 5/1s or 10/min`},
		{"zero limit", "rules: [0/1s]\n", `c.yaml:1: rules[0]: rule "0/1s": limit must be positive`},
		{"rule is a map", "rules:\n  - limit: 5\n", "c.yaml:2: rules[0]: want a rule such as 10/s"},
		{"rules a map", "rules:\n  limit: 5\n", "c.yaml:2: rules: want a list such as [10/s, 500/min]"},
		{"rules empty string", "rules: ''\n", `c.yaml:1: rules[0]: rule list "" names no rule`},
		{"duplicate rule", "rules: [10/s, 10/1s]\n", "c.yaml:1: rules[1]: 10/1s is already listed at line 1"},
		{"duplicate rule kept otherwise", "rules: [10/s, 10/s:exact]\n", "c.yaml:1: rules[1]: 10/1s:exact is already listed at line 1"},
		{"cap zero", "rules: [5/1s]\nmax_in_flight: 0\n", `c.yaml:2: max_in_flight: want a whole number above 0, got "0"`},
		{"cap negative", "max_in_flight: -3\n", `c.yaml:1: max_in_flight: want a whole number above 0, got "-3"`},
		{"cap quoted", "max_in_flight: \"4\"\n", `c.yaml:1: max_in_flight: want a whole number above 0, got "4"`},
		{"cap float", "max_in_flight: 4.5\n", `c.yaml:1: max_in_flight: want a whole number above 0, got "4.5"`},
		{"cap list", "max_in_flight: [4]\n", `c.yaml:1: max_in_flight: want a whole number above 0, got ""`},
		{"boundary", "rules: [5/1s]\nboundary: inclusive\n", `c.yaml:2: boundary: want half-open or closed, got "inclusive"`},
		{"boundary empty", "rules: [5/1s]\nboundary: ''\n", `c.yaml:2: boundary: want half-open or closed, got ""`},
		{"name list", "name: [a]\nrules: [5/1s]\n", "c.yaml:1: name: want a string"},
		{"two documents", "rules: [5/1s]\n---\nrules: [6/1s]\n", "c.yaml:2: a second YAML document: a contract file holds one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tt.yaml))
			require.Error(t, err, "got %+v", c)
			assert.EqualError(t, err, tt.want)
			var ce *Error
			if assert.ErrorAs(t, err, &ce, "the error must unwrap to an *Error") {
				assert.Equal(t, "c.yaml", ce.File)
			}
		})
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, "none.yaml")
}

// TestLoadSizeCap: Load reads at most MaxSize bytes, so a wrong path (a
// device, a huge log) is a clear error, not a read without end.
func TestLoadSizeCap(t *testing.T) {
	dir := t.TempDir()
	padded := func(n int) string {
		body := "rules: [5/1s]\n"
		return body + "#" + strings.Repeat("x", n-len(body)-2) + "\n"
	}
	tooBig := `larger than 1048576 bytes (1 MiB): a contract file is a few lines of YAML`
	tests := []struct {
		name, path, text string
		want             string // "" for a contract that loads
	}{
		{"exactly the cap", "max.yaml", padded(MaxSize), ""},
		{"one byte over", "over.yaml", padded(MaxSize + 1), tooBig},
		{"ten times over", "big.yaml", padded(10 * MaxSize), tooBig},
		{"endless device", "/dev/zero", "", tooBig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path
			if tt.text != "" {
				path = filepath.Join(dir, tt.path)
				require.NoError(t, os.WriteFile(path, []byte(tt.text), 0o644))
			} else if _, err := os.Stat(path); err != nil {
				t.Skipf("%s: %v", path, err)
			}
			c, err := Load(path)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, []rule.Rule{{Limit: 5, Window: time.Second}}, c.Rules)
				return
			}
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, path, ce.File)
			assert.EqualError(t, err, path+": "+tt.want)
		})
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	c := Contract{Name: "a \"quoted\": name", Rules: []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 7, Window: 1500 * time.Millisecond}}, MaxInFlight: 3, Boundary: rule.Closed}
	got, err := Parse("c.yaml", c.YAML())
	require.NoError(t, err, "%s", c.YAML())
	assert.Equal(t, c, got)
}

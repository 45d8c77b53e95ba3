package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
	"github.com/rlcheck/rlcheck/serve"
	"github.com/rlcheck/rlcheck/workload"
)

func serveConfig(t *testing.T, args ...string) (*ServeFlags, *pflag.FlagSet, error) {
	t.Helper()
	var f ServeFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.Add(fs)
	require.NoError(t, fs.Parse(args))
	_, err := f.Config(fs)
	return &f, fs, err
}

func TestServeFlags(t *testing.T) {
	contract := filepath.Join(t.TempDir(), "api.yaml")
	require.NoError(t, os.WriteFile(contract, []byte("rules: [5/1s]\nmax_in_flight: 4\nboundary: closed\n"), 0o644))
	var f ServeFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.Add(fs)
	require.NoError(t, fs.Parse([]string{"--contract", contract, "--rules", "12/3s", "--latency", "lognormal(80ms, 0.5)",
		"--on-violation", "record", "--upstream", "http://127.0.0.1:9/api"}))
	cfg, err := f.Config(fs)
	require.NoError(t, err)
	assert.Equal(t, []rule.Rule{{Limit: 5, Window: time.Second}, {Limit: 12, Window: 3 * time.Second}}, cfg.Rules)
	assert.Equal(t, rule.Closed, cfg.Boundary)
	assert.Equal(t, 4, cfg.MaxInFlight, "the contract's cap")
	assert.Equal(t, workload.Dist{Kind: workload.LogNormal, A: 80 * time.Millisecond, Sigma: 0.5}, cfg.Latency)
	assert.True(t, cfg.Record)
	assert.Equal(t, "127.0.0.1:9", cfg.Upstream.Host)

	require.NoError(t, fs.Parse([]string{"--max-in-flight", "0"}))
	cfg, err = f.Config(fs)
	require.NoError(t, err)
	assert.Zero(t, cfg.MaxInFlight, "an explicit 0 lifts the contract's cap")

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{nil, "no rules"},
		{[]string{"--rules", "5/1s", "--latency", "sometimes"}, `distribution "sometimes"`},
		{[]string{"--rules", "5/1s", "--on-violation", "ignore"}, `--on-violation "ignore": want reject or record`},
		{[]string{"--rules", "5/1s", "--upstream", "api.example.com"}, "want an absolute URL"},
		{[]string{"--rules", "5/1s", "--format", "xml"}, `--format "xml"`},
		{[]string{"--rules", "5/1s", "--boundary", "open-ish"}, "boundary"},
		{[]string{"--rules", "5/0s"}, "5/0s"},
		{[]string{"--rules", "5/1s", "--upstream-timeout", "0s"}, "--upstream-timeout 0s: want more than 0"},
	} {
		_, _, err := serveConfig(t, tc.args...)
		assert.ErrorContains(t, err, tc.err, "%v", tc.args)
	}
}

func TestWatchFlags(t *testing.T) {
	parse := func(args ...string) error {
		var f WatchFlags
		fs := pflag.NewFlagSet("watch", pflag.ContinueOnError)
		f.Add(fs)
		require.NoError(t, fs.Parse(args))
		_, err := f.Config([]string{"a.csv"})
		return err
	}
	var f WatchFlags
	fs := pflag.NewFlagSet("watch", pflag.ContinueOnError)
	f.Add(fs)
	require.NoError(t, fs.Parse([]string{"--rules", "10/s", "--key-col", "tenant", "--format", "json", "--unit", "ms", "--input-format", "csv"}))
	cfg, err := f.Config([]string{"a.csv", "b.csv"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.csv", "b.csv"}, cfg.Paths)
	assert.True(t, cfg.JSON)
	assert.Equal(t, sendlog.Options{Format: sendlog.FormatCSV, KeyCol: "tenant", Unit: sendlog.UnitMillis, DurationUnit: sendlog.UnitSeconds}, cfg.Read)

	assert.ErrorContains(t, parse(), "no rules")
	assert.ErrorContains(t, parse("--rules", "10/s", "--format", "xml"), `--format "xml"`)
	assert.ErrorContains(t, parse("--rules", "10/s", "--unit", "min"), "min")
	assert.ErrorContains(t, parse("--rules", "10/s", "--input-format", "xml"), "xml")
	assert.ErrorContains(t, parse("--rules", "10/s", "--poll", "-1s"), "--poll")
}

// TestServeProviderFlags: --provider reads the costs from the body, so it
// takes no --cost; --completion-share is a share of max_tokens.
func TestServeProviderFlags(t *testing.T) {
	var f ServeFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	f.Add(fs)
	require.NoError(t, fs.Parse([]string{"--rules", "5/1s, 100 tokens/1m", "--provider", "azure-openai", "--completion-share", "0.25"}))
	cfg, err := f.Config(fs)
	require.NoError(t, err)
	assert.Equal(t, serve.AzureOpenAI, cfg.Provider)
	assert.Equal(t, 250, cfg.CompletionPermille)
	assert.Empty(t, cfg.Costs)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--rules", "5/1s", "--provider", "gemini"}, `--provider "gemini": want openai, anthropic, azure-openai`},
		{[]string{"--rules", "5/1s", "--completion-share", "0.5"}, "--completion-share goes with --provider"},
		{[]string{"--rules", "5/1s", "--provider", "openai", "--completion-share", "0"}, "from 0.001 to 10"},
		{[]string{"--rules", "5/1s", "--provider", "openai", "--completion-share", "11"}, "from 0.001 to 10"},
		{[]string{"--rules", "10 tokens/1s", "--provider", "openai", "--cost", "tokens=X"}, "--cost with --provider openai"},
		{[]string{"--provider", "openai"}, `no rules: --provider openai answers in its dialect, the limits are your account's (its limits page lists them); give them, such as --rules "500/1m, 30000 tokens/1m", or --contract FILE`},
		{[]string{"--provider", "anthropic"}, `such as --rules "50/1m, 30000 input_tokens/1m, 8000 output_tokens/1m"`},
	} {
		_, _, err := serveConfig(t, tc.args...)
		assert.ErrorContains(t, err, tc.err, "%v", tc.args)
	}
}

// TestServeRefusedFlag: --refused reads count or free, the contract's
// refused: where the flag is not given; count by default.
func TestServeRefusedFlag(t *testing.T) {
	contract := filepath.Join(t.TempDir(), "api.yaml")
	require.NoError(t, os.WriteFile(contract, []byte("rules: [5/1s]\nrefused: free\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want rule.Refusals
	}{
		{[]string{"--rules", "5/1s"}, rule.RefusedCount},
		{[]string{"--rules", "5/1s", "--provider", "openai", "--refused", "free"}, rule.RefusedFree},
		{[]string{"--contract", contract}, rule.RefusedFree},
		{[]string{"--contract", contract, "--refused", "count"}, rule.RefusedCount},
	} {
		var f ServeFlags
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.Add(fs)
		require.NoError(t, fs.Parse(tc.args))
		cfg, err := f.Config(fs)
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, cfg.Refusals, "%v", tc.args)
	}
	_, _, err := serveConfig(t, "--rules", "5/1s", "--refused", "never")
	assert.ErrorContains(t, err, `--refused "never": want count`)
}

// TestReadLayoutFlagsAgree: every command that reads a log (check, infer,
// watch) takes the layout flags with the same help text and default, its
// own list of layouts aside.
func TestReadLayoutFlagsAgree(t *testing.T) {
	sets := map[string]*pflag.FlagSet{}
	for name, add := range map[string]func(*pflag.FlagSet){
		"check": (&ReadFlags{}).Add, "infer": (&InferFlags{}).Add, "watch": (&WatchFlags{}).Add,
	} {
		sets[name] = pflag.NewFlagSet(name, pflag.ContinueOnError)
		add(sets[name])
	}
	for _, flag := range []string{"input-format", "time-col", "time-field", "key-col", "key-field", "unit", "tz"} {
		want := sets["check"].Lookup(flag)
		require.NotNil(t, want, flag)
		for name, fs := range sets {
			got := fs.Lookup(flag)
			require.NotNil(t, got, "%s takes --%s", name, flag)
			assert.Equal(t, want.DefValue, got.DefValue, "%s --%s default", name, flag)
			if flag == "input-format" {
				assert.True(t, strings.HasPrefix(got.Usage, "input layout: "), "%s --%s: %s", name, flag, got.Usage)
				continue
			}
			assert.Equal(t, want.Usage, got.Usage, "%s --%s help", name, flag)
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
)

// A rule given twice, in the contract and the flags or twice in the flags,
// was checked twice, doubling its violations in the totals; it is kept
// once, where first given, with a warning. Flags extend the contract.
func TestRuleGivenTwiceIsCheckedOnce(t *testing.T) {
	dir := t.TempDir()
	api := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(api, []byte("rules: [10/1s, 500/min]\n"), 0o644))
	for _, tc := range []struct {
		name   string
		flags  RuleFlags
		want   string
		warned int
	}{
		{"contract and --rules", RuleFlags{Contract: api, Rules: "10/s"}, "10/1s,500/1m", 1},
		{"twice in --rules", RuleFlags{Rules: "10/1s,10/1s"}, "10/1s", 1},
		{"--rule and --rules", RuleFlags{Rule: []string{"10/s"}, Rules: "10/1s,5/1s"}, "10/1s,5/1s", 1},
		{"contract extended", RuleFlags{Contract: api, Rule: []string{"10000/day"}}, "10/1s,500/1m,10000/24h", 0},
		{"three times", RuleFlags{Contract: api, Rule: []string{"10/s"}, Rules: "500/1m,10/1s"}, "10/1s,500/1m", 3},
		{"the same window, another limit", RuleFlags{Rules: "10/1s,20/1s"}, "10/1s,20/1s", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warn bytes.Buffer
			f := tc.flags
			f.Warn = &warn
			c, err := f.Load()
			require.NoError(t, err)
			want, err := rule.ParseList(tc.want)
			require.NoError(t, err)
			assert.Equal(t, want, c.Rules)
			assert.Equal(t, tc.warned, bytes.Count(warn.Bytes(), []byte("given twice")), warn.String())
		})
	}
}

// serve and watch take their rules through the same Load.
func TestServeAndWatchRulesOnce(t *testing.T) {
	var warn bytes.Buffer
	s := ServeFlags{Rules: RuleFlags{Warn: &warn}}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.Add(fs)
	require.NoError(t, fs.Parse([]string{"--rules", "5/1s,5/s"}))
	cfg, err := s.Config(fs)
	require.NoError(t, err)
	assert.Len(t, cfg.Rules, 1)

	w := WatchFlags{Rules: RuleFlags{Warn: &warn}}
	fs = pflag.NewFlagSet("watch", pflag.ContinueOnError)
	w.Add(fs)
	require.NoError(t, fs.Parse([]string{"--rule", "5/1s", "--rule", "5/1s"}))
	wcfg, err := w.Config([]string{"x.log"})
	require.NoError(t, err)
	assert.Len(t, wcfg.Rules, 1)
	assert.Equal(t, 2, bytes.Count(warn.Bytes(), []byte("given twice")))
}

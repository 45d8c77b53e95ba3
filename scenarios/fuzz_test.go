package scenarios

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// FuzzParse feeds arbitrary YAML to the loader: it must never panic, and
// every refusal must be a *scenarios.Error naming the file.
func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		data, _ := shipped.ReadFile(n + ".yaml")
		f.Add(data)
	}
	f.Add([]byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ncalers: 4\n"))
	f.Add([]byte("arrivals: {pattern: replay, file: x}\n"))
	f.Add([]byte("rules: {a: b}\nskew: 3\n"))
	f.Add([]byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\nworkers: 2\nsend_delay:\n  - empirical(late.txt)\n  - 1ms\nredis_rtt: 2ms\nmargin: 1ms\n"))
	f.Add([]byte("rules: [10 tokens/1s, 5 bytes/1s]\nstrategies: [reserve]\ncallers: 3\nactual_costs: {tokens: 2}\n"))
	f.Add([]byte("rules: [10 tokens/1s]\nstrategies: [post-call]\ncallers: 3\ncosts: {tokens: 3}\nactual_costs: [2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data, files)
		if err != nil {
			var se *Error
			require.ErrorAs(t, err, &se)
			// The scenario, or the replayed log the error is in.
			require.True(t, se.File == "f.yaml" || strings.HasSuffix(se.File, ".txt"), "error %v does not name the file", err)
			return
		}
		require.NoError(t, catalog.Validate(&s.Scenario), "a parsed scenario validates")
	})
}

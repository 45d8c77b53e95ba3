package contract

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse checks that no input panics Parse and that every contract it
// accepts is usable and survives a round trip through YAML.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../../testdata/contracts/api.yaml"); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"", "rules: [5/1s, 12/3s]\n", "max_in_flight: 4\n", "rules: 10/s,500/min\nboundary: closed\n",
		"name: 'x'\nrules: [1/1ns]\n", "rules: [5/1s]\nfoo: 1\n", "{rules: [2/1d], max_in_flight: 0x10}",
		"rules: [5/1s]\n---\n", "name: &a x\nrules: [*a]\n", "rules: [9223372036854775807/1s]\n",
		"rules: [90000 tokens/1m, 5000/1h fixed, 10000/1d fixed at 00:00 America/New_York, 10/1s burst 20, 100/1m first-call]\n",
		"rules:\n  - 10000000 tokens/1d:b96\n  - 5/1h fixed at 00:30\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse("f.yaml", []byte(s))
		if err != nil {
			return
		}
		require.False(t, len(c.Rules) == 0 && c.MaxInFlight <= 0, "%q: accepted a contract with nothing to check: %+v", s, c)
		for _, r := range c.Rules {
			require.True(t, r.Limit > 0 && r.Window > 0, "%q: accepted rule %+v", s, r)
		}
		back, err := Parse("f.yaml", c.YAML())
		require.NoError(t, err, "%q: YAML() wrote\n%s\nwhich does not parse", s, c.YAML())
		require.Equal(t, c, back, "%q: round trip", s)
	})
}

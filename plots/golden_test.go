package plots

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/internal/golden"
)

// TestSeriesGolden pins what the fixture timelines draw, point by point, so
// any change in the series shows up in review.
func TestSeriesGolden(t *testing.T) {
	for _, name := range []string{"asyncio-sequential", "asyncio-combined"} {
		t.Run(name, func(t *testing.T) {
			s, err := TimelineSeries(TimelineInput{Times: fixtures.MustTimes(t, name+".txt"), Rules: fixtureRules}, 960)
			require.NoError(t, err)
			var buf bytes.Buffer
			for _, rs := range s.Rules {
				fmt.Fprintf(&buf, "rule %s: %d violations, peak %d\n", rs.Rule, rs.Violations, rs.Peak)
				for _, m := range rs.Markers {
					fmt.Fprintf(&buf, "violation at %d ns: send %d, %d in window\n", m.At, m.Send, m.Count)
				}
				for _, p := range rs.Steps {
					fmt.Fprintf(&buf, "%d %d\n", p.At, p.Count)
				}
			}
			golden.Assert(t, name+".series.golden", buf.String())
		})
	}
}

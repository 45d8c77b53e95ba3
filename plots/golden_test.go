package plots

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlcheck/rlcheck/internal/fixtures"
	"github.com/rlcheck/rlcheck/internal/golden"
)

var update = golden.Update

// TestSeriesGolden pins what the fixture timelines draw, point by point, so
// any change in the series shows up in review.
func TestSeriesGolden(t *testing.T) {
	for _, name := range []string{"asyncio-sequential", "asyncio-combined"} {
		t.Run(name, func(t *testing.T) {
			s, err := TimelineSeries(TimelineInput{Times: fixtures.MustTimes(t, name+".txt"), Rules: fixtureRules}, 960)
			if err != nil {
				t.Fatal(err)
			}
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
			path := filepath.Join("testdata", name+".series.golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./plots -run Golden -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("series differs from %s; if the change is intended, run go test ./plots -run Golden -update", path)
			}
		})
	}
}

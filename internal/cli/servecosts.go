package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

// ServeCostSources says where serve reads the cost of each unit the rules
// meter, from --cost UNIT=HEADER or --cost UNIT=body:FIELD flags (a dotted
// path into the JSON body); every unit needs one.
func ServeCostSources(rules []rule.Rule, costFlags []string) ([]serve.CostSource, error) {
	units := checker.UnitsOf(rules)
	var out []serve.CostSource
	for _, f := range costFlags {
		unit, name, ok := strings.Cut(f, "=")
		unit, name = strings.TrimSpace(unit), strings.TrimSpace(name)
		if !ok || unit == "" || name == "" {
			return nil, fmt.Errorf("--cost %q: want UNIT=HEADER or UNIT=body:FIELD, such as tokens=X-Tokens or tokens=body:max_tokens", f)
		}
		if !slices.Contains(units, unit) {
			return nil, fmt.Errorf("--cost %q: no rule meters %s (the rules meter %s)", f, unit, unitList(units))
		}
		if slices.ContainsFunc(out, func(c serve.CostSource) bool { return c.Unit == unit }) {
			return nil, fmt.Errorf("--cost %q: %s has a source already", f, unit)
		}
		c := serve.CostSource{Unit: unit, Header: name}
		if field, isBody := strings.CutPrefix(name, "body:"); isBody {
			if field == "" {
				return nil, fmt.Errorf("--cost %q: want a field after body:", f)
			}
			c = serve.CostSource{Unit: unit, Field: field}
		}
		out = append(out, c)
	}
	for _, u := range units {
		if !slices.ContainsFunc(out, func(c serve.CostSource) bool { return c.Unit == u }) {
			return nil, fmt.Errorf("the rules meter %s: say where a request carries it, --cost %s=HEADER or --cost %s=body:FIELD", u, u, u)
		}
	}
	return out, nil
}

package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

// ServeCostSources says where serve reads the cost of each unit the rules
// meter, from --cost UNIT=HEADER or --cost UNIT=body:FIELD flags (a dotted
// path into the JSON body); every unit needs one.
func ServeCostSources(rules []rule.Rule, costFlags []string) ([]serve.CostSource, error) {
	units := rule.Units(rules)
	flags, err := parseCosts(costFlags, "UNIT=HEADER or UNIT=body:FIELD, such as tokens=X-Tokens or tokens=body:max_tokens", units, false)
	if err != nil {
		return nil, err
	}
	var out []serve.CostSource
	for _, f := range flags {
		c := serve.CostSource{Unit: f.unit, Header: f.name}
		if field, isBody := strings.CutPrefix(f.name, "body:"); isBody {
			if field == "" {
				return nil, fmt.Errorf("--cost %q: want a field after body:", f.text)
			}
			c = serve.CostSource{Unit: f.unit, Field: field}
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

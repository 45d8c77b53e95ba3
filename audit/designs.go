package audit

import "github.com/rlcheck/rlcheck/strategies/catalog"

// design is what the audit knows of a design beyond its analytic model,
// one value per design (the zero value for those the table leaves out).
type design struct {
	// perRule: each rule's limiter takes its own burst and rate
	// (Config.PerRule), so the search tunes them rule by rule.
	perRule bool
}

var designs = map[string]design{
	catalog.XRateChained:    {perRule: true},
	catalog.XRateReserveAll: {perRule: true},
}

func designOf(name string) design { return designs[name] }

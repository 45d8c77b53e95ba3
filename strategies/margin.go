package strategies

import (
	"math"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Widen returns rules with every window margin wider, for a limiter to
// enforce while the provider counts the rules as written. A send reaches
// the provider some delay d after its admission; when every d lies in
// [a, b], a limiter exact on W + margin keeps W at the provider as soon as
// margin >= b - a. Hand the result to any constructor (or to
// redislimit.New): NewRealCombined(Widen(2*time.Millisecond, rules...)...).
func Widen(margin time.Duration, rules ...rule.Rule) []rule.Rule {
	out := make([]rule.Rule, len(rules))
	for i, r := range rules {
		out[i] = r
		if margin > 0 {
			out[i].Window = time.Duration(min(uint64(r.Window)+uint64(margin), math.MaxInt64))
		}
	}
	return out
}

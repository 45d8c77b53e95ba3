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
//
// A rule of another kind keeps its windows and carries the margin instead
// (rule.Rule.Margin), which its book honours: a fixed rule admits nothing
// in the last margin of each window, which keeps it when 0 <= a and
// b <= margin (the whole delay, counting how far the provider's clock
// runs ahead of ours, not only its spread); a bucket rule
// keeps Margin*N/W units of its burst in reserve, which margin >= b - a
// makes enough; a first-call rule is kept as the sliding rule
// N/(W+margin).
func Widen(margin time.Duration, rules ...rule.Rule) []rule.Rule {
	out := make([]rule.Rule, len(rules))
	for i, r := range rules {
		out[i] = r
		switch {
		case margin <= 0:
		case r.Kind != rule.Sliding:
			out[i].Margin = time.Duration(min(uint64(r.Margin)+uint64(margin), math.MaxInt64))
		default:
			out[i].Window = time.Duration(min(uint64(r.Window)+uint64(margin), math.MaxInt64))
		}
	}
	return out
}

package infer

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule"
)

// wide reports whether the range lo..hi is more than 10% of hi wide.
func wide(lo, hi int64) bool { return 10*(hi-lo) > hi }

// Advice says what traffic would narrow a rule's ranges where one has no
// upper bound or is more than 10% wide; "" where every range is narrow.
func (r Rule) Advice() string {
	if r.Kind == rule.Bucket {
		return r.bucketAdvice()
	}
	w := rule.FormatWindow(r.Window)
	switch {
	case r.Max == 0:
		return fmt.Sprintf("no refusal bounds N: send more than %d calls within one %s window to see where it refuses", r.Min, w)
	case wide(int64(r.Min), int64(r.Max)):
		return fmt.Sprintf("send bursts of %d to %d calls within one %s window, one size a window: the least refused pins N", r.Min, r.Max+1, w)
	}
	return ""
}

func (r Rule) bucketAdvice() string {
	w := rule.FormatWindow(r.Window)
	var out string
	switch {
	case r.RateOpen:
		out = fmt.Sprintf("the rate has no upper bound (every refusal it alone explains came in the same instant as the calls that emptied it): "+
			"after emptying the bucket, send a call every few tenths of %s: the first accepted one bounds the rate", w)
	case wide(r.RateMin, r.RateMax):
		out = fmt.Sprintf("after emptying the bucket, send at steady paces from %s to %s per %s: the pace where refusals start pins the rate",
			perWindow(r.RateMin, r.Window), perWindow(r.RateMax, r.Window), w)
	}
	if r.Max == 0 || wide(int64(r.Min), int64(r.Max)) {
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("after an idle spell long enough to fill it, send %d calls at one instant: the first refused pins the burst", max(r.Max, r.Min)+1)
	}
	return out
}

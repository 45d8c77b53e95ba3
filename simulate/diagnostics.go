package simulate

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rlcheck/rlcheck/metrics"
	"github.com/rlcheck/rlcheck/rule"
)

// RuleUsage is how hard one rule was pressed during one strategy's run.
type RuleUsage struct {
	Rule rule.Rule
	// Peak is the most sends in one window over the limit; Mean is the
	// window occupancy averaged over time from the first send to the last,
	// over the limit. 1 is a full window.
	Peak, Mean float64
	// FirstFull is the first instant a window held the limit (-1: never).
	FirstFull int64
	// Waited, WaitShare and FirstBound come from the strategy's own stats:
	// time callers slept with this rule binding, its share of all waiting,
	// and when it first made a caller wait (-1: never or unknown).
	Waited     time.Duration
	WaitShare  float64
	FirstBound int64
	// HasStats is false for strategies that keep no wait figures.
	HasStats bool
	// Wall says FirstFull and FirstBound are wall-clock instants.
	Wall bool
}

// Usage returns each rule's usage for one strategy's run, computed from
// its sends and stats.
func Usage(st *StrategyResult, b rule.Boundary) []RuleUsage {
	var total time.Duration
	for _, rr := range st.Rules {
		total += rr.Waited
	}
	out := make([]RuleUsage, len(st.Rules))
	rules := make([]rule.Rule, len(st.Rules))
	for i, rr := range st.Rules {
		rules[i] = rr.Rule
	}
	units := unitsOf(rules)
	for i, rr := range st.Rules {
		u := RuleUsage{Rule: rr.Rule, FirstBound: rr.FirstBound, Waited: rr.Waited, HasStats: rr.Records >= 0, Wall: st.Wall}
		u.Peak = float64(rr.MaxInWindow) / float64(rr.Rule.Limit)
		if k := slices.Index(units, rr.Rule.Unit); k >= 0 {
			u.Mean = meanInUnit(st.Sends, st.SendCosts, len(units), k, rr.Rule.Window) / float64(rr.Rule.Limit)
			u.FirstFull = firstFullCost(st.Sends, st.SendCosts, len(units), k, rr.Rule, b)
		} else {
			u.Mean = metrics.MeanOccupancy(st.Sends, rr.Rule.Window) / float64(rr.Rule.Limit)
			u.FirstFull = FirstFull(st.Sends, rr.Rule, b)
		}
		if total > 0 {
			u.WaitShare = float64(rr.Waited) / float64(total)
		}
		out[i] = u
	}
	return out
}

// meanInUnit is metrics.MeanOccupancy in a unit: the cost in the window,
// averaged over the run, sends' costs being costs[i*nu+k].
func meanInUnit(sends, costs []int64, nu, k int, w time.Duration) float64 {
	if len(sends) == 0 {
		return 0
	}
	first, last := sends[0], sends[len(sends)-1]
	var sum float64
	for i, s := range sends {
		c := float64(costs[i*nu+k])
		if last == first {
			sum += c
			continue
		}
		sum += c * float64(min(int64(w), last-s))
	}
	if last == first {
		return sum
	}
	return sum / float64(last-first)
}

// firstFullCost is FirstFull in a unit: the first send that brought the
// cost in a window of r to its limit, or -1.
func firstFullCost(sends, costs []int64, nu, k int, r rule.Rule, b rule.Boundary) int64 {
	var sum int64
	j := 0
	for i, s := range sends {
		sum += costs[i*nu+k]
		for !b.Within(time.Duration(s-sends[j]), r.Window) {
			sum -= costs[j*nu+k]
			j++
		}
		if sum >= int64(r.Limit) {
			return s
		}
	}
	return -1
}

// FirstFull returns the first send that brought a window of r to its
// limit, or -1 when no window ever held that many.
func FirstFull(sends []int64, r rule.Rule, b rule.Boundary) int64 {
	n := r.Limit
	for i := n - 1; i < len(sends); i++ {
		if b.Within(time.Duration(sends[i]-sends[i-n+1]), r.Window) {
			return sends[i]
		}
	}
	return -1
}

// Binding returns the index of the binding rule and says in plain words
// which rule binds and from when. A strategy's own wait figures decide;
// without them, the rule whose window filled first does.
func Binding(us []RuleUsage) (int, string) {
	best := -1
	for i, u := range us {
		if u.HasStats && u.Waited > 0 && (best < 0 || u.Waited > us[best].Waited) {
			best = i
		}
	}
	if best >= 0 {
		u := us[best]
		return best, fmt.Sprintf("%s binds: %.0f%% of the waiting (%s), from %s",
			RuleName(u.Rule), 100*u.WaitShare, seconds(u.Waited), u.intoRun(u.FirstBound))
	}
	for i, u := range us {
		if u.FirstFull >= 0 && (best < 0 || u.FirstFull < us[best].FirstFull) {
			best = i
		}
	}
	if best < 0 {
		return -1, "no rule binds: no window ever filled"
	}
	u := us[best]
	if us[best].HasStats {
		return best, fmt.Sprintf("no caller waited; %s was the first to fill its window, at %s",
			RuleName(u.Rule), u.intoRun(u.FirstFull))
	}
	return best, fmt.Sprintf("%s binds first: its window filled at %s (no wait figures for this strategy)",
		RuleName(u.Rule), u.intoRun(u.FirstFull))
}

// RuleName names a rule the way people speak of it: "the daily quota
// (10000/24h)", "the per-second limit (10/1s)".
func RuleName(r rule.Rule) string {
	kinds := []struct {
		w    time.Duration
		name string
	}{
		{time.Second, "the per-second limit"}, {time.Minute, "the per-minute limit"},
		{time.Hour, "the hourly quota"}, {24 * time.Hour, "the daily quota"},
		{7 * 24 * time.Hour, "the weekly quota"}, {30 * 24 * time.Hour, "the monthly quota"},
	}
	for _, k := range kinds {
		if r.Window == k.w {
			return k.name + " (" + r.String() + ")"
		}
	}
	return "the " + r.String() + " rule"
}

// sinceStart writes an instant of the run as a rounded duration: "18m31s",
// "1.25s", "120ms".
func sinceStart(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

// intoRun places an instant in the run in words: its time of day when
// the run started at a wall-clock instant.
func (u RuleUsage) intoRun(ns int64) string {
	if u.Wall {
		return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	s := sinceStart(ns)
	if ns <= 0 || s == "0s" {
		return "the start of the run"
	}
	return s + " into the run"
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

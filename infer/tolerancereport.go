package infer

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// writeTolerance says what it takes to fit a log no contract fits
// exactly: the spread, the offset and the calls it absorbs.
func writeTolerance(b *strings.Builder, res *Result) {
	t := res.Tolerance
	if t == nil {
		return
	}
	u := t.Used()
	if !t.Fits {
		if t.Delay > 0 {
			fmt.Fprintf(b, "\nNo contract fits within the %s delay given.", t.Delay)
		}
		fmt.Fprintf(b, "\nNo tolerance up to a spread of %s fits either: under the reading \"%s\", %s unexplained, %s of the %d calls.\n",
			t.Spread, u.Reading, plural(u.Unexplaineds, "refused call")+isAre(u.Unexplaineds), share(u.Unexplaineds, t.Calls), t.Calls)
		return
	}
	if t.Simpler {
		fmt.Fprintf(b, "\nSIMPLER WITHIN A TOLERANCE: %s fit%s, where the exact contract needs %s: the refusals the extra rules explain may be a delay's.\n",
			plural(len(u.Rules), "rule"), map[bool]string{true: "s", false: ""}[len(u.Rules) == 1], plural(len(res.Fits[res.Best].Rules), "rule"))
	}
	head := "WITHIN A TOLERANCE"
	if t.WithinDelay() {
		head = fmt.Sprintf("WITHIN THE %s DELAY GIVEN", t.Delay)
	}
	fmt.Fprintf(b, "\n%s: a contract fits if each call reached the provider up to %s after its logged instant%s.\n",
		head, t.Spread, offsetText(u))
	if t.Delay > 0 && !t.WithinDelay() {
		fmt.Fprintf(b, "That is more than the %s delay given: no contract fits within it.\n", t.Delay)
	}
	fmt.Fprintf(b, "%d of the %d calls (%s) are consistent only thanks to it: the contract judges them otherwise on the logged instants.\n",
		u.Absorbed, t.Calls, share(u.Absorbed, t.Calls))
	for _, rd := range []Reading{t.Best, 1 - t.Best} {
		f := t.ByReading[rd]
		switch {
		case !f.Fits:
			fmt.Fprintf(b, "%s: no rule explains %s within %s\n", rd, plural(f.Unexplaineds, "refusal"), within(f, t))
		case rd == t.Best:
			fmt.Fprintf(b, "%s: every refusal explained by %s within it (this reading fits best)\n", rd, plural(len(f.Rules), "rule"))
		default:
			fmt.Fprintf(b, "%s: every refusal explained by %s within %s: %s\n", rd, plural(len(f.Rules), "rule"), within(f, t), RulesText(f.Rules))
		}
	}
	if bs := bucketRangesSpread(t); bs > u.Spread {
		fmt.Fprintf(b, "The buckets' ranges are those within %s, a delay as common: they hold every bucket that fits within it.\n", bs)
	}
	b.WriteString("\n")
	writeRules(b, u.Fit)
	fmt.Fprintf(b, "\nrules within a %s tolerance: %s\n", t.Spread, RulesText(u.Rules))
}

// within names a reading's spread: "it" when it is the one reported.
func within(f ToleranceFit, t *Tolerance) string {
	if f.Spread == t.Spread {
		return "it"
	}
	return f.Spread.String()
}

// offsetText names the clock offset a fixed window's fit assumed.
func offsetText(u ToleranceFit) string {
	if !u.OffsetMatters {
		return " (no fixed window: the clocks' offset does not matter)"
	}
	return fmt.Sprintf(", with an offset of %s from the log's clock to the provider's (%s to %s fit alike)", u.Offset, u.OffsetMin, u.OffsetMax)
}

func isAre(n int) string {
	if n == 1 {
		return " stays"
	}
	return " stay"
}

// share writes n/of as a percentage.
func share(n, of int) string {
	if of == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(of))
}

type jsonTolerance struct {
	SpreadNs      int64      `json:"spread_ns"`
	Fits          bool       `json:"fits"`
	Reading       string     `json:"reading"`
	Rules         string     `json:"rules"`
	Contract      []jsonRule `json:"contract"`
	OffsetMatters bool       `json:"offset_matters"`
	OffsetNs      int64      `json:"offset_ns"`
	OffsetMinNs   int64      `json:"offset_min_ns"`
	OffsetMaxNs   int64      `json:"offset_max_ns"`
	Absorbed      int        `json:"absorbed_calls"`
	Unexplained   int        `json:"unexplained_refusals"`
	Calls         int        `json:"calls"`
	Simpler       bool       `json:"simpler"`
	// BucketsNs is the spread within which the contract's buckets'
	// ranges hold every bucket that fits: the fit's, or bucketSpread
	// where that is wider; 0 without a bucket.
	BucketsNs int64 `json:"bucket_ranges_spread_ns"`
	// DelayNs is the delay the user gave (Options.Delay); absent without.
	DelayNs int64 `json:"delay_ns,omitempty"`
}

// jsonToleranceOf is the tolerance in the JSON report; its contract's rules
// are written as the exact contract's are.
func jsonToleranceOf(t *Tolerance) *jsonTolerance {
	if t == nil {
		return nil
	}
	u := t.Used()
	var fits [2]Fit
	fits[t.Best] = u.Fit
	return &jsonTolerance{
		SpreadNs: int64(t.Spread), Fits: t.Fits, Reading: u.Reading.String(), Rules: RulesText(u.Rules),
		Contract: jsonKey("", &Result{Fits: fits, Best: t.Best}).Contract, OffsetMatters: u.OffsetMatters, OffsetNs: int64(u.Offset),
		OffsetMinNs: int64(u.OffsetMin), OffsetMaxNs: int64(u.OffsetMax),
		Absorbed: u.Absorbed, Unexplained: u.Unexplaineds, Calls: t.Calls, Simpler: t.Simpler,
		BucketsNs: int64(bucketRangesSpread(t)), DelayNs: int64(t.Delay),
	}
}

// bucketRangesSpread is the spread within which the buckets' ranges of
// the fit reported hold every bucket that fits (the delay given, or else
// bucketSpread, where the fit's own is narrower), or 0 when it has no
// bucket.
func bucketRangesSpread(t *Tolerance) time.Duration {
	u := t.Used()
	if !slices.ContainsFunc(u.Rules, func(r Rule) bool { return r.Kind == rule.Bucket }) {
		return 0
	}
	return max(u.Spread, t.wide)
}

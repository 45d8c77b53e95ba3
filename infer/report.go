package infer

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Report is the inference over every key of one log.
type Report struct {
	File  string
	Log   *Log
	Keys  []*Result // in the order of Log.Keys
	Calls int
}

// Run infers the contract of every key of the log.
func Run(file string, log *Log, opt Options) *Report {
	rep := &Report{File: file, Log: log}
	if opt.Units == nil {
		opt.Units = log.Units
	}
	for _, k := range log.Keys {
		res := Infer(log.Sends[k], opt)
		rep.Keys = append(rep.Keys, res)
		rep.Calls += res.Sends
	}
	return rep
}

// Contradicted reports whether some key's log no reading explains.
func (rep *Report) Contradicted() bool {
	for _, r := range rep.Keys {
		if r.contradicted() {
			return true
		}
	}
	return false
}

// Looser reports whether some key's declared contract allows calls the
// provider refused.
func (rep *Report) Looser() bool {
	for _, r := range rep.Keys {
		if r.Declared != nil && r.Declared.Looser() {
			return true
		}
	}
	return false
}

// RulesText returns the rules as --rules takes them, comma-separated.
func RulesText(rs []Rule) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Rule().String())
	}
	return strings.Join(s, ",")
}

// instant shows a time as UTC when it is an epoch time, else as seconds.
func instant(ns int64) string {
	if ns >= int64(365*24*time.Hour) {
		return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	return fmt.Sprintf("%d.%09d s", ns/1e9, ns%1e9)
}

// WriteText writes the report for a reader.
func (rep *Report) WriteText(w io.Writer, all bool) error {
	return rep.write(newKeyWriter(w, "text", rep.File, rep.Log, all))
}

// write hands every key's result to kw.
func (rep *Report) write(kw *keyWriter) error {
	for i, res := range rep.Keys {
		if err := kw.key(i, res); err != nil {
			return err
		}
	}
	return kw.close()
}

func writeKey(b *strings.Builder, file string, res *Result, all bool) {
	writeFindings(b, file, res, all)
	writeHeaders(b, res)
	if res.Declared != nil {
		writeDeclared(b, res)
	}
}

// writeFindings writes what the log shows of the provider's contract.
func writeFindings(b *strings.Builder, file string, res *Result, all bool) {
	fmt.Fprintf(b, "%s: %d calls, %d accepted, %d refused (429)", file, res.Sends, res.Accepted, res.Refused)
	if res.Sends > 0 {
		fmt.Fprintf(b, ", from %s to %s", instant(res.First), instant(res.Last))
	}
	b.WriteString("\n")
	switch {
	case res.Sends == 0:
		b.WriteString("No call with a 2xx or 429 status: nothing to infer.\n")
		return
	case res.Refused == 0:
		b.WriteString("No call was refused: the log gives lower bounds only. The provider allowed at least:\n\n")
		writeBounds(b, res, false)
		return
	case res.Tolerance.WithinDelay():
		// the answer is the fit within the delay given, not the exact one
		writeTolerance(b, res)
	case !res.Fits[res.Best].Fits:
		writeContradiction(b, res)
		writeTolerance(b, res)
		return
	default:
		writeReadings(b, res)
		writeRules(b, res.Fits[res.Best])
		fmt.Fprintf(b, "\nrules: %s\n", RulesText(res.Fits[res.Best].Rules))
		writeTolerance(b, res)
	}
	if all {
		b.WriteString("\nEvery window and kind (least N, refusals it explains at that N, cost in pointer steps):\n\n")
		writeBounds(b, res, true)
		fmt.Fprintf(b, "\nToken buckets: %d kept of those tried, %d steps in all.\n", len(res.Buckets), res.BucketSteps)
	}
}

// writeDeclared sets the declared contract beside the log.
func writeDeclared(b *strings.Builder, res *Result) {
	d := res.Declared
	var rs []rule.Rule
	for _, r := range d.Rules {
		rs = append(rs, r.Rule)
	}
	fmt.Fprintf(b, "\nDeclared contract %s, under the reading \"%s\":\n", joinRules(rs), d.Reading)
	if d.Looser() {
		fmt.Fprintf(b, "  LOOSER than the provider's: it allows %s the provider refused, the first on line %d\n", plural(d.Allowed, "call"), d.AllowedLine)
	}
	if d.Refused > 0 {
		fmt.Fprintf(b, "  stricter than needed: it refuses %s the provider accepted, the first on line %d\n", plural(d.Refused, "call"), d.RefusedLine)
	}
	if !d.Looser() && d.Refused == 0 {
		b.WriteString("  consistent with the log: it allows no call the provider refused and refuses none it accepted\n")
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tPROVIDER ALLOWS AT LEAST\tLEFT UNUSED\tACCEPTED CALLS IT REFUSES")
	for _, r := range d.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", r.Rule, declaredAmount(r.Rule, r.AtLeast), declaredAmount(r.Rule, r.Unused()), r.Refused)
	}
	tw.Flush()
	if f := res.Fits[res.Best]; f.Fits && res.Refused > 0 {
		fmt.Fprintf(b, "consistent contracts: %s\n", RulesText(f.Rules))
	}
}

func writeReadings(b *strings.Builder, res *Result) {
	for _, rd := range []Reading{res.Best, 1 - res.Best} {
		f := res.Fits[rd]
		fmt.Fprintf(b, "%s: ", rd)
		switch {
		case !f.Fits:
			u := f.Unexplained[0]
			fmt.Fprintf(b, "contradicted: no rule explains %s, the first on line %d\n", plural(f.Unexplaineds, "refusal"), u.Line)
		case rd == res.Best && res.BothFit:
			fmt.Fprintf(b, "every refusal explained by %s (both readings fit: the log cannot tell them apart)\n", plural(len(f.Rules), "rule"))
		case rd == res.Best:
			fmt.Fprintf(b, "every refusal explained by %s (this reading fits best)\n", plural(len(f.Rules), "rule"))
		default:
			fmt.Fprintf(b, "every refusal explained by %s: %s\n", plural(len(f.Rules), "rule"), RulesText(f.Rules))
		}
	}
	if f := res.Fits[res.Best]; f.Fits && f.Broken > 0 {
		fmt.Fprintf(b, "but these rules break %s, the first on line %d: the bucket search samples rates and bursts, and missed the exact ones here\n",
			plural(f.Broken, "accepted call"), f.BrokenLine)
	}
	if f := res.Fits[res.Best]; f.Fits && f.Missed > 0 {
		fmt.Fprintf(b, "but these rules, as named, leave %s unexplained, the first on line %d: a bucket's ranges bound it from outside, and no point inside them that explains every refusal was found\n",
			plural(f.Missed, "refusal"), f.MissedLine)
	}
	if f := res.Fits[res.Best]; !f.Smallest && f.Unproved != "" {
		fmt.Fprintf(b, "(the smallest found, not proved: %s)\n", f.Unproved)
	}
	b.WriteString("\n")
}

func writeRules(b *strings.Builder, f Fit) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tN\tEXPLAINS\tLOWER BOUND PINNED BY\tUPPER BOUND PINNED BY\tCONFIDENCE")
	for _, r := range f.Rules {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.2f\n", r.Rule(), nRange(r), r.Explains,
			pins(r.MinPins, "accepted call", r.TightestLine), pins(r.MaxPins, "refusal", r.ClosestRefusedLine), math.Floor(100*r.Confidence)/100)
	}
	tw.Flush()
	for _, r := range f.Rules {
		if r.Kind == rule.Bucket {
			writeBucketRange(b, r)
		}
	}
	for _, r := range f.Rules {
		if len(r.AlsoFits) > 0 {
			fmt.Fprintf(b, "%s could also be: %s\n", r.Rule(), joinRules(r.AlsoFits))
		}
	}
	for _, r := range f.Rules {
		if a := r.Advice(); a != "" {
			fmt.Fprintf(b, "to narrow %s: %s\n", r.Rule(), a)
		}
	}
}

// writeBucketRange writes a bucket's region: its bursts and its rates,
// "at least" where the log sets no upper bound on the rate.
func writeBucketRange(b *strings.Builder, r Rule) {
	w := rule.FormatWindow(r.Window)
	rates := fmt.Sprintf("at rates from %s to %s per %s", perWindow(r.RateMin, r.Window), perWindow(r.RateMax, r.Window), w)
	if r.RateOpen {
		rates = fmt.Sprintf("at a rate of at least %s per %s (cannot tell the most)", perWindow(r.RateMin, r.Window), w)
	}
	fmt.Fprintf(b, "%s: a token bucket; N is its burst, %s\n", r.Rule(), rates)
	if r.Outer {
		fmt.Fprintf(b, "%s: these ranges bound it from outside (calls another rule refused may have drained it) and hold every rate and burst that fits\n", r.Rule())
	}
}

// perWindow writes a rate of q units a day per window w, to four
// decimals: a float at the edge only.
func perWindow(q int64, w time.Duration) string {
	return strconv.FormatFloat(float64(q)*float64(w)/float64(day), 'f', 4, 64)
}

func nRange(r Rule) string {
	if r.Max == 0 {
		return fmt.Sprintf("at least %d", r.Min)
	}
	if r.Min == r.Max {
		return fmt.Sprint(r.Min)
	}
	return fmt.Sprintf("%d..%d", r.Min, r.Max)
}

// plural writes "1 call", "2 calls".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func pins(n int, what string, line int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%s, line %d", plural(n, what), line)
}

func joinRules(rs []rule.Rule) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	return strings.Join(s, ", ")
}

// writeBounds tabulates every window's least N, per kind; with explain,
// also the refusals each explains and its cost, under the best reading.
// The cost rules follow the call rules, a table per unit.
func writeBounds(b *strings.Builder, res *Result, explain bool) {
	for from := 0; from < len(res.Candidates); {
		unit := res.Candidates[from].Unit
		to := from
		for to < len(res.Candidates) && res.Candidates[to].Unit == unit {
			to++
		}
		if unit != "" {
			fmt.Fprintf(b, "\nIn %s:\n\n", unit)
		}
		writeBoundsOf(b, res.Candidates[from:to], res.Best, explain)
		from = to
	}
}

func writeBoundsOf(b *strings.Builder, cands []Candidate, best Reading, explain bool) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if explain {
		fmt.Fprintln(tw, "WINDOW\tKIND\tLEAST N\tEXPLAINS\tSTEPS")
	} else {
		fmt.Fprintln(tw, "WINDOW\tSLIDING\tFIXED")
	}
	for i := 0; i < len(cands); i += 4 {
		// Per window: sliding and fixed, each under both readings.
		s, f := cands[i+int(best)], cands[i+2+int(best)]
		if !explain {
			fmt.Fprintf(tw, "%s\t%d\t%d\n", rule.FormatWindow(s.Window), s.AtLeast, f.AtLeast)
			continue
		}
		for _, c := range []Candidate{s, f} {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", rule.FormatWindow(c.Window), c.Kind, c.AtLeast, c.Explains, c.Steps)
		}
	}
	tw.Flush()
}

func writeContradiction(b *strings.Builder, res *Result) {
	f := res.Fits[res.Best]
	fmt.Fprintf(b, "CONTRADICTION: under either reading, no rule on the grid explains %s.\n", plural(f.Unexplaineds, "refused call"))
	fmt.Fprintf(b, "Under the reading \"%s\", the first:\n", f.Reading)
	for _, u := range f.Unexplained {
		fmt.Fprintf(b, "  line %d at %s was refused with %d earlier calls in its %s %s window;"+
			" line %d was accepted with %d in its own\n",
			u.Line, instant(u.At), u.Before, rule.FormatWindow(u.Window), u.Kind, u.TightestLine, u.AtLeast-1)
	}
}

// WriteJSON writes the report as one JSON document (docs/infer.md).
func (rep *Report) WriteJSON(w io.Writer) error {
	return rep.write(newKeyWriter(w, "json", rep.File, rep.Log, false))
}

// declaredAmount names n in a declared rule's terms: units of its cost
// ("1200 tokens"), and for a bucket a burst ("burst 9").
func declaredAmount(r rule.Rule, n int) string {
	s := strconv.Itoa(n)
	if r.Unit != "" {
		s += " " + r.Unit
	}
	if r.Kind == rule.Bucket {
		s = "burst " + s
	}
	return s
}

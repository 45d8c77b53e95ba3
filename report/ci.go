package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
	"github.com/rlcheck/rlcheck/rule"
)

// ciCase is one verdict a CI system shows on its own line: one rule, or the
// in-flight cap, for one key.
type ciCase struct {
	Key     string // "" when the logs are not split per key
	Name    string // "5/1s" or "in flight ≤ 4"
	Count   int64  // violations
	First   *checker.Send
	Summary string // one line: the count and the first violation's place
	Detail  string // one more line for readers who open the failure
	Rule    rule.Rule
	Listed  []checker.Violation // the violations listed (Config.List)
}

// ciCases lists the verdicts of res, groups worst first, rules in the order
// given, the in-flight cap last.
func ciCases(res *Result) []ciCase {
	at := InstantFormatter(res.First)
	var cases []ciCase
	for gi := range res.Groups {
		g := &res.Groups[gi]
		for _, r := range g.Report.Rules {
			c := ciCase{Key: keytext.Show(g.Key), Name: r.Rule.String(), Count: r.Violations, Rule: r.Rule, Listed: r.Listed}
			most := strconv.FormatInt(r.MaxInWindow, 10)
			if r.MaxSaturated {
				most = "at least " + most
			}
			c.Detail = fmt.Sprintf("%s: %s; no sends", r.Rule, ciCount(r.Violations, "violation"))
			if r.MaxInWindow > 0 {
				c.Detail = fmt.Sprintf("%s: %s; at most %s %s in one %s window, the first such window from %s (%s)",
					r.Rule, ciCount(r.Violations, "violation"), most, nounFor(r.MaxInWindow, r.MaxSaturated, "send"), rule.FormatWindow(r.Rule.Window), ciPlace(res, r.MaxWindowStart.Ref), at(r.MaxWindowStart.At))
			} else if r.Rule.Kind == rule.Bucket && g.Report.Sends > 0 {
				c.Detail = fmt.Sprintf("%s: %s", r.Rule, ciCount(r.Violations, "violation")) // a bucket has no window
			}
			if v := r.First; v != nil {
				c.First = &v.Send
				count := strconv.FormatInt(v.Count, 10)
				if v.CountSaturated {
					count = "at least " + count
				}
				c.Summary = fmt.Sprintf("%s of %s%s; the first at %s (%s): %s %s in the window from %s (%s)",
					ciCount(r.Violations, "violation"), r.Rule, ciForKey(res, g.Key), ciPlace(res, v.Send.Ref), at(v.Send.At),
					count, nounFor(v.Count, v.CountSaturated, "send"), ciPlace(res, v.WindowStart.Ref), at(v.WindowStart.At))
				if r.Rule.Kind != rule.Sliding {
					c.Summary = fmt.Sprintf("%s of %s%s; the first at %s (%s): %s",
						ciCount(r.Violations, "violation"), r.Rule, ciForKey(res, g.Key), ciPlace(res, v.Send.Ref), at(v.Send.At),
						windowText(r.Rule, *v, at, func(ref int64) string { return ciPlace(res, ref) }))
				}
			}
			cases = append(cases, c)
		}
		f := g.InFlight
		if f == nil && !res.PerKey {
			f = res.InFlight // a cap checked over the whole stream only
		}
		if f != nil {
			c := ciCase{Key: keytext.Show(g.Key), Name: fmt.Sprintf("in flight ≤ %d", f.Max), Count: f.Violations}
			c.Detail = fmt.Sprintf("in flight: %s; no calls", ciCount(f.Violations, "violation"))
			if f.Peak > 0 {
				c.Detail = fmt.Sprintf("in flight: %s; peak %s at %s (%s)", ciCount(f.Violations, "violation"), ciCount(f.Peak, "call"), ciPlace(res, f.PeakAt.Ref), at(f.PeakAt.At))
			}
			if f.First != nil {
				c.First = f.First
				c.Summary = fmt.Sprintf("%s started with %d already in flight%s; the first at %s (%s); peak %d at %s",
					ciCount(f.Violations, "call"), f.Max, ciForKey(res, g.Key), ciPlace(res, f.First.Ref), at(f.First.At), f.Peak, ciPlace(res, f.PeakAt.Ref))
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// ciCount writes "1 violation" or "2 violations".
func ciCount(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}

// nounFor is noun as a count of n needs it, plural for a lower bound.
func nounFor(n int64, lowerBound bool, noun string) string {
	if n == 1 && !lowerBound {
		return noun
	}
	return noun + "s"
}

func ciForKey(res *Result, key string) string {
	if !res.PerKey {
		return ""
	}
	return " for key " + strconv.Quote(key)
}

// ciFileLine splits a send's Ref into its input's name and line; name is ""
// when the input has no path a CI system could open (standard input).
func ciFileLine(res *Result, ref int64) (string, int64) {
	r := Ref(ref)
	if r.File() < 0 || r.File() >= len(res.Files) {
		return "", r.Line()
	}
	name := res.Files[r.File()].Name
	if name == "-" || strings.HasPrefix(name, "<") {
		name = ""
	}
	return name, r.Line()
}

// ciPlace names a send's place as file:line, or "line N" for standard input.
func ciPlace(res *Result, ref int64) string {
	name, line := ciFileLine(res, ref)
	if name == "" {
		return "line " + strconv.FormatInt(line, 10)
	}
	return name + ":" + strconv.FormatInt(line, 10)
}

func ciInputs(res *Result) string {
	if len(res.Files) > 3 {
		return fmt.Sprintf("%d files", len(res.Files))
	}
	var names []string
	for _, f := range res.Files {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// JUnit XML, in the layout Jenkins, GitLab and the GitHub test-report
// actions read: a suite per key (one suite without keys), a case per rule.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Properties *junitProperties `xml:"properties"`
	Cases      []junitCase      `xml:"testcase"`
}

type junitProperties struct {
	List []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes res as JUnit XML: one test case per rule, per key when
// the logs were split per key, and one for the in-flight cap.
func writeJUnit(w io.Writer, res *Result) error {
	doc := junitSuites{Name: "rlcheck"}
	props := &junitProperties{List: []junitProperty{
		{"inputs", ciInputs(res)},
		{"sends", strconv.FormatInt(res.Sends, 10)},
		{"span", time.Duration(res.Last - res.First).String()},
		{"boundary", res.Boundary.String()},
	}}
	for _, c := range ciCases(res) {
		suiteName := "rlcheck"
		if res.PerKey {
			suiteName = "key " + c.Key
		}
		if n := len(doc.Suites); n == 0 || doc.Suites[n-1].Name != suiteName {
			doc.Suites = append(doc.Suites, junitSuite{Name: suiteName, Time: "0", Properties: props})
			props = nil // once is enough
		}
		s := &doc.Suites[len(doc.Suites)-1]
		jc := junitCase{Name: c.Name, Classname: "rlcheck", Time: "0"}
		if res.PerKey {
			jc.Classname = "rlcheck.key"
			jc.Name = c.Key + ": " + c.Name
		}
		if c.Count > 0 {
			typ := "RateLimitExceeded"
			if strings.HasPrefix(c.Name, "in flight") {
				typ = "InFlightCapExceeded"
			}
			msg := c.Summary
			if msg == "" {
				msg = c.Detail
			}
			jc.Failure = &junitFailure{Message: msg, Type: typ, Body: c.Detail}
			s.Failures++
			doc.Failures++
		}
		s.Tests++
		doc.Tests++
		s.Cases = append(s.Cases, jc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// ghMaxAnnotations is how many ::error lines to write: GitHub shows only
// the first ten of a step, so the last one sums up the rest.
const ghMaxAnnotations = 10

// WriteGitHub writes res as GitHub Actions workflow commands: an ::error
// annotation on each listed violation (Config.List), or on the first
// violation of a broken rule that lists none, one ::notice when every rule
// held, or a ::warning when there was nothing to check. GitHub shows ten
// annotations a step, so past ten the last sums up the rest.
func writeGitHub(w io.Writer, res *Result) error {
	var b strings.Builder
	var broken []ciCase
	for _, c := range ciCases(res) {
		if c.Count > 0 {
			broken = append(broken, c)
		}
	}
	if res.Sends == 0 {
		// A clean verdict over nothing proves nothing, so it should stand out.
		fmt.Fprintf(&b, "::warning title=%s::%s\n", ghProperty("rlcheck: no sends"),
			ghData(fmt.Sprintf("no sends in %s: nothing was checked", ciInputs(res))))
		_, err := io.WriteString(w, b.String())
		return err
	}
	if len(broken) == 0 {
		var names []string
		for _, r := range res.Rules {
			names = append(names, r.String())
		}
		if res.MaxInFlight > 0 {
			names = append(names, fmt.Sprintf("in flight ≤ %d", res.MaxInFlight))
		}
		keys := ""
		if res.PerKey {
			keys = " for " + ciCount(int64(res.Keys()), "key")
		}
		fmt.Fprintf(&b, "::notice title=%s::%s\n", ghProperty("rlcheck: every rule held"),
			ghData(fmt.Sprintf("%s from %s checked against %s%s: no violations", ciCount(res.Sends, "send"), ciInputs(res), strings.Join(names, ", "), keys)))
		_, err := io.WriteString(w, b.String())
		return err
	}
	notes := ghAnnotations(res, broken)
	shown := notes
	if len(shown) > ghMaxAnnotations {
		shown = shown[:ghMaxAnnotations-1]
	}
	for _, n := range shown {
		b.WriteString(n)
	}
	if rest := len(notes) - len(shown); rest > 0 {
		fmt.Fprintf(&b, "::error title=%s::%s\n", ghProperty("rlcheck: more violations"),
			ghData(fmt.Sprintf("%d more annotations left out (GitHub shows %d a step); %s overall, in %s",
				rest, ghMaxAnnotations, ciCount(res.Violations(), "violation"), ciCount(int64(len(broken)), "broken rule"))))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ghAnnotations writes the ::error lines of the broken cases: one per
// listed violation, or one on the first violation of a case that lists
// none. They go round the cases, each case's first, then each case's
// second, and so on, so that the first ten show every broken rule.
func ghAnnotations(res *Result, broken []ciCase) []string {
	at := InstantFormatter(res.First)
	perCase := make([][]string, len(broken))
	for i, c := range broken {
		title := "rlcheck: " + c.Name + " broken"
		if res.PerKey {
			title = "rlcheck: " + c.Name + " broken for key " + c.Key
		}
		if len(c.Listed) == 0 {
			perCase[i] = []string{ghError(res, c.First, title, strings.TrimPrefix(c.Summary+"\n"+c.Detail, "\n"))}
			continue
		}
		for k, v := range c.Listed {
			count := strconv.FormatInt(v.Count, 10)
			if v.CountSaturated {
				count = "at least " + count
			}
			msg := fmt.Sprintf("violation %d of %d of %s%s, at %s (%s): %s %s in the %s window from %s (%s)\n%s",
				k+1, c.Count, c.Rule, ciForKey(res, c.Key), ciPlace(res, v.Send.Ref), at(v.Send.At),
				count, nounFor(v.Count, v.CountSaturated, "send"), rule.FormatWindow(c.Rule.Window), ciPlace(res, v.WindowStart.Ref), at(v.WindowStart.At), c.Detail)
			send := v.Send
			perCase[i] = append(perCase[i], ghError(res, &send, title, msg))
		}
	}
	var out []string
	for k := 0; ; k++ {
		n := len(out)
		for _, lines := range perCase {
			if k < len(lines) {
				out = append(out, lines[k])
			}
		}
		if len(out) == n {
			return out
		}
	}
}

// ghError is one ::error line, on the file and line of send when it has
// a file GitHub can show.
func ghError(res *Result, send *checker.Send, title, msg string) string {
	var b strings.Builder
	b.WriteString("::error ")
	if send != nil {
		if file, line := ciFileLine(res, send.Ref); file != "" {
			fmt.Fprintf(&b, "file=%s,line=%d,", ghProperty(file), line)
		}
	}
	fmt.Fprintf(&b, "title=%s::%s\n", ghProperty(title), ghData(msg))
	return b.String()
}

// ghData escapes a workflow command's message.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value, where : and ,
// would end the value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// ghSummaryKeys bounds the keys listed in the step summary.
const ghSummaryKeys = 20

// WriteStepSummary writes res as Markdown for $GITHUB_STEP_SUMMARY.
func writeStepSummary(w io.Writer, res *Result) error {
	at := InstantFormatter(res.First)
	var b strings.Builder
	if n := res.Violations(); n > 0 {
		fmt.Fprintf(&b, "### rlcheck: %s\n\n", ciCount(n, "violation"))
	} else {
		b.WriteString("### rlcheck: every rule held\n\n")
	}
	if res.Sends == 0 {
		fmt.Fprintf(&b, "No sends in %s.\n", mdCell(ciInputs(res)))
	} else {
		fmt.Fprintf(&b, "%s from %s to %s (%v) in %s; %s windows.\n",
			ciCount(res.Sends, "send"), at(res.First), at(res.Last), time.Duration(res.Last-res.First), mdCell(ciInputs(res)), res.Boundary)
	}
	var skipped, filtered int64
	for _, f := range res.Files {
		skipped += f.Skipped
		filtered += f.Filtered
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "%s skipped.\n", ciCount(skipped, "invalid line"))
	}
	if filtered > 0 {
		fmt.Fprintf(&b, "%s left out by filters.\n", ciCount(filtered, "access-log line"))
	}
	if d := res.Disorder; d.Lines > 0 {
		fmt.Fprintf(&b, "%s arrived out of time order, by at most %v.\n", ciCount(d.Lines, "line"), d.Max)
	}
	b.WriteString("\n")
	if !res.PerKey {
		b.WriteString("| Rule | Violations | First violation | Detail |\n| --- | ---: | --- | --- |\n")
		for _, c := range ciCases(res) {
			first := "–"
			if c.First != nil {
				first = mdCell(ciPlace(res, c.First.Ref) + " at " + at(c.First.At))
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", mdCell(c.Name), c.Count, first, mdCell(c.Detail))
		}
		_, err := io.WriteString(w, b.String())
		return err
	}

	fmt.Fprintf(&b, "| Rule | Violations | Keys with violations (of %d) |\n| --- | ---: | ---: |\n", res.Keys())
	for _, t := range res.Totals {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", t.Rule, t.Violations, t.Groups)
	}
	if f := res.InFlight; f != nil {
		var keys int
		if res.Unlisted != nil {
			keys = res.Unlisted.InFlightKeys
		}
		for _, g := range res.Groups {
			if g.InFlight != nil && g.InFlight.Violations > 0 {
				keys++
			}
		}
		fmt.Fprintf(&b, "| in flight ≤ %d | %d | %d |\n", res.MaxInFlight, f.Violations, keys)
	}
	shown := res.Groups
	if len(shown) > ghSummaryKeys {
		shown = shown[:ghSummaryKeys]
	}
	fmt.Fprintf(&b, "\n| Key | Violations |")
	align := "| --- | ---: |"
	for _, r := range res.Rules {
		fmt.Fprintf(&b, " %s |", r)
		align += " ---: |"
	}
	if res.MaxInFlight > 0 {
		fmt.Fprintf(&b, " in flight ≤ %d |", res.MaxInFlight)
		align += " ---: |"
	}
	b.WriteString("\n" + align + "\n")
	for gi := range shown {
		g := &shown[gi]
		fmt.Fprintf(&b, "| %s | %d |", mdCell(keytext.Show(g.Key)), g.Violations())
		for _, r := range g.Report.Rules {
			fmt.Fprintf(&b, " %d |", r.Violations)
		}
		if res.MaxInFlight > 0 {
			if g.InFlight != nil {
				fmt.Fprintf(&b, " %d |", g.InFlight.Violations)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	if len(shown) < res.Keys() {
		fmt.Fprintf(&b, "\nThe %d worst of %d keys.\n", len(shown), res.Keys())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdCell makes text safe inside a Markdown table cell: one line, no column
// breaks, no HTML.
func mdCell(s string) string {
	if s == "" {
		return "–"
	}
	return strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

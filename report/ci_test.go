package report

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/internal/golden"
	"github.com/rlcheck/rlcheck/rule"
)

// ciSend is one send of a hand-built result: where it came from, when it
// started and ended, and its key.
type ciSend struct {
	file    int
	line    int64
	at, end int64
	key     string
}

// ciBase is 2024-11-30T05:50:00Z, so reports show UTC times.
const ciBase = int64(1732945800) * int64(time.Second)

func ms(n int64) int64 { return ciBase + n*int64(time.Millisecond) }

// ciResult builds an Result the way Run fills one, by running
// the checker over sends given in time order.
func ciResult(t *testing.T, files []string, rules []rule.Rule, maxInFlight int, perKey bool, sends []ciSend) *Result {
	t.Helper()
	res := &Result{Rules: rules, MaxInFlight: maxInFlight, PerKey: perKey}
	for _, f := range files {
		res.Files = append(res.Files, FileInfo{Name: f, Format: "csv"})
	}
	type group struct {
		c *checker.Checker
		f *checker.InFlight
	}
	groups := map[string]*group{}
	var keys []string
	for i, s := range sends {
		if i == 0 {
			res.First = s.at
		}
		res.Sends++
		res.Last = s.at
		res.Files[s.file].Lines++
		res.Files[s.file].Sends++
		key := s.key
		if !perKey {
			key = ""
		}
		g := groups[key]
		if g == nil {
			g = &group{c: checker.New(checker.Config{Rules: rules})}
			if maxInFlight > 0 {
				g.f = checker.NewInFlight(maxInFlight)
			}
			groups[key] = g
			keys = append(keys, key)
		}
		ref := int64(MakeRef(s.file, s.line))
		require.NoError(t, g.c.Observe(s.at, ref))
		if g.f != nil {
			require.NoError(t, g.f.Observe(s.at, s.end, ref))
		}
	}
	for _, k := range keys {
		g := Group{Key: k, Report: groups[k].c.Report()}
		if f := groups[k].f; f != nil {
			rep := f.Report()
			g.InFlight = &rep
		}
		res.Groups = append(res.Groups, g)
	}
	slices.SortStableFunc(res.Groups, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Violations(), a.Violations()), cmp.Compare(a.Key, b.Key))
	})
	for i, r := range rules {
		tot := RuleTotal{Rule: r}
		for _, g := range res.Groups {
			tot.Violations += g.Report.Rules[i].Violations
			if g.Report.Rules[i].Violations > 0 {
				tot.Groups++
			}
		}
		res.Totals = append(res.Totals, tot)
	}
	if maxInFlight > 0 {
		sum := &checker.InFlightReport{Max: maxInFlight}
		for _, g := range res.Groups {
			sum.Violations += g.InFlight.Violations
			if g.InFlight.Peak > sum.Peak {
				sum.Peak, sum.PeakAt = g.InFlight.Peak, g.InFlight.PeakAt
			}
			if f := g.InFlight.First; f != nil && (sum.First == nil || f.At < sum.First.At) {
				sum.First = f
			}
		}
		res.InFlight = sum
	}
	return res
}

func mustRules(t *testing.T, s string) []rule.Rule {
	t.Helper()
	rs, err := rule.ParseList(s)
	require.NoError(t, err)
	return rs
}

// ciFleet is two hosts' logs merged: seven calls within 350 ms break 5/1s
// twice, and calls of 120 ms overlap past a cap of 2.
func ciFleet(t *testing.T) *Result {
	var sends []ciSend
	for i, at := range []int64{0, 100, 150, 200, 250, 300, 350, 2500} {
		file, line := 0, int64(i/2+1)
		if i%2 == 1 {
			file = 1
		}
		sends = append(sends, ciSend{file: file, line: line, at: ms(at), end: ms(at + 120)})
	}
	return ciResult(t, []string{"logs/host1.csv", "logs/host2.csv"}, mustRules(t, "5/1s,12/3s"), 2, false, sends)
}

// ciTenants is one log split per key, with a file name and keys that need
// escaping in every format.
func ciTenants(t *testing.T) *Result {
	var sends []ciSend
	add := func(key string, atMs ...int64) {
		for _, at := range atMs {
			sends = append(sends, ciSend{line: int64(len(sends) + 2), at: ms(at), end: ms(at + 10), key: key})
		}
	}
	add("tenant-a", 0, 300, 600)
	add("tenant|b:50%,\nx<y>", 1000, 1100, 1200, 1300)
	add("tenant-c", 1500, 2600)
	add("tenant-a", 2700)
	slices.SortStableFunc(sends, func(a, b ciSend) int { return cmp.Compare(a.at, b.at) })
	for i := range sends {
		sends[i].line = int64(i + 2)
	}
	return ciResult(t, []string{"logs/api,east:50%.csv"}, mustRules(t, "2/1s,3/10s"), 0, true, sends)
}

// ciClean is a log from standard input that keeps every rule.
func ciClean(t *testing.T) *Result {
	sends := []ciSend{{line: 1, at: ms(0), end: ms(5)}, {line: 2, at: ms(500), end: ms(505)}, {line: 3, at: ms(1000), end: ms(1005)}}
	return ciResult(t, []string{"<stdin>"}, mustRules(t, "2/1s"), 4, false, sends)
}

func TestCIGolden(t *testing.T) {
	results := []struct {
		name string
		res  func(*testing.T) *Result
	}{{"fleet", ciFleet}, {"tenants", ciTenants}, {"clean", ciClean}}
	writers := []struct {
		ext   string
		write func(*bytes.Buffer, *Result) error
	}{
		{"junit.xml", func(b *bytes.Buffer, r *Result) error { return writeJUnit(b, r) }},
		{"github.txt", func(b *bytes.Buffer, r *Result) error { return writeGitHub(b, r) }},
		{"summary.md", func(b *bytes.Buffer, r *Result) error { return writeStepSummary(b, r) }},
	}
	for _, r := range results {
		for _, w := range writers {
			t.Run(r.name+"."+w.ext, func(t *testing.T) {
				var b bytes.Buffer
				require.NoError(t, w.write(&b, r.res(t)))
				golden.Assert(t, "ci/"+r.name+"."+w.ext, b.String())
			})
		}
	}
}

// TestJUnitReadBack reads the JUnit output with a JUnit library and checks
// each rule's failing cases and violation counts against the result.
func TestJUnitReadBack(t *testing.T) {
	for _, res := range []*Result{ciFleet(t), ciTenants(t), ciClean(t)} {
		var b bytes.Buffer
		require.NoError(t, writeJUnit(&b, res))
		suites, err := junit.Ingest(b.Bytes())
		require.NoError(t, err, "%s", b.String())
		failing := map[string]int{}   // rule → failing cases
		counted := map[string]int64{} // rule → violations named in the failures
		cases := 0
		for _, s := range suites {
			for _, tc := range s.Tests {
				cases++
				name := tc.Name
				if res.PerKey {
					_, name, _ = strings.Cut(name, ": ")
					key := strings.TrimPrefix(s.Name, "key ")
					assert.True(t, strings.HasPrefix(tc.Name, key+": "), "case %q is in the suite of another key, %q", tc.Name, s.Name)
				}
				if tc.Status != junit.StatusFailed {
					assert.Equal(t, junit.StatusPassed, tc.Status, "case %q: status", tc.Name)
					continue
				}
				var n int64
				_, err := fmt.Sscanf(tc.Message, "%d ", &n)
				assert.NoError(t, err, "case %q: failure message %q does not start with the count", tc.Name, tc.Message)
				assert.Positive(t, n, "case %q: failure message %q does not start with the count", tc.Name, tc.Message)
				failing[name]++
				counted[name] += n
			}
		}
		wantCases := len(res.Groups) * len(res.Rules)
		for _, tot := range res.Totals {
			name := tot.Rule.String()
			assert.Equal(t, tot.Groups, failing[name], "%s: failing cases", name)
			assert.Equal(t, tot.Violations, counted[name], "%s: violations named in the failures", name)
		}
		if res.InFlight != nil {
			wantCases += len(res.Groups)
			name := fmt.Sprintf("in flight ≤ %d", res.MaxInFlight)
			assert.Equal(t, res.InFlight.Violations, counted[name], "%s: violations", name)
		}
		assert.Equal(t, wantCases, cases, "test cases")
	}
}

func TestGitHubEscaping(t *testing.T) {
	tests := []struct {
		in, data, property string
	}{
		{"plain text", "plain text", "plain text"},
		{"50%", "50%25", "50%25"},
		{"%0A literal", "%250A literal", "%250A literal"},
		{"two\nlines\r\n", "two%0Alines%0D%0A", "two%0Alines%0D%0A"},
		{"file:12, col 3", "file:12, col 3", "file%3A12%2C col 3"},
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
		{"a%,:\n", "a%25,:%0A", "a%25%2C%3A%0A"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.data, ghData(tt.in), "ghData(%q)", tt.in)
		assert.Equal(t, tt.property, ghProperty(tt.in), "ghProperty(%q)", tt.in)
		assert.Equal(t, tt.in, ghUnescape(ghProperty(tt.in)), "unescaping ghProperty(%q)", tt.in)
	}
}

// ghUnescape undoes the workflow-command escaping as the runner does.
func ghUnescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

// TestGitHubCommands parses the annotations back: one command a line, and
// properties that hold no raw separator.
func TestGitHubCommands(t *testing.T) {
	res := ciTenants(t)
	var b bytes.Buffer
	require.NoError(t, writeGitHub(&b, res))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	broken := 0
	for _, tot := range res.Totals {
		broken += tot.Groups
	}
	assert.Len(t, lines, broken, "annotations, want one per broken rule and key:\n%s", b.String())
	for _, l := range lines {
		cmd, msg, ok := strings.Cut(strings.TrimPrefix(l, "::error "), "::")
		require.True(t, strings.HasPrefix(l, "::error ") && ok, "not an ::error command: %q", l)
		props := map[string]string{}
		for _, p := range strings.Split(cmd, ",") {
			k, v, ok := strings.Cut(p, "=")
			require.True(t, ok && !strings.ContainsAny(v, ":\r\n"), "property %q of %q is not escaped", p, l)
			props[k] = ghUnescape(v)
		}
		assert.Equal(t, "logs/api,east:50%.csv", props["file"], "annotation %q: file", l)
		assert.NotEmpty(t, props["line"], "annotation %q: line", l)
		assert.Contains(t, props["title"], "tenant", "annotation %q: title names no key", l)
		assert.False(t, strings.ContainsAny(msg, "\r\n"), "message %q: want newlines escaped", msg)
		assert.Contains(t, ghUnescape(msg), "\n", "message %q: want newlines escaped", msg)
	}
}

func TestGitHubAnnotationCap(t *testing.T) {
	var sends []ciSend
	for k := range 14 {
		for i := range 3 {
			sends = append(sends, ciSend{line: int64(len(sends) + 1), at: ms(int64(k*3 + i)), key: fmt.Sprintf("k%02d", k)})
		}
	}
	res := ciResult(t, []string{"a.csv"}, mustRules(t, "2/1s"), 0, true, sends)
	var b bytes.Buffer
	require.NoError(t, writeGitHub(&b, res))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, ghMaxAnnotations, "annotations:\n%s", b.String())
	want := fmt.Sprintf("::error title=rlcheck%%3A more violations::%d more annotations left out (GitHub shows %d a step); %d violations overall, in %d broken rules",
		len(res.Groups)-(ghMaxAnnotations-1), ghMaxAnnotations, res.Violations(), len(res.Groups))
	assert.Equal(t, want, lines[len(lines)-1], "last annotation")
}

func TestStepSummaryKeyCap(t *testing.T) {
	var sends []ciSend
	for k := range ghSummaryKeys + 5 {
		for range k%3 + 1 {
			sends = append(sends, ciSend{line: int64(len(sends) + 1), at: ms(int64(len(sends))), key: fmt.Sprintf("k%02d", k)})
		}
	}
	res := ciResult(t, []string{"a.csv"}, mustRules(t, "2/1s"), 0, true, sends)
	var b bytes.Buffer
	require.NoError(t, writeStepSummary(&b, res))
	out := b.String()
	assert.Equal(t, ghSummaryKeys, strings.Count(out, "\n| k"), "key rows:\n%s", out)
	assert.Contains(t, out, fmt.Sprintf("The %d worst of %d keys.", ghSummaryKeys, ghSummaryKeys+5), "summary")
	// The worst keys (three sends each, one violation) come first.
	assert.Contains(t, out, "| k02 | 1 | 1 |\n| k05 | 1 | 1 |", "worst keys not first")
}

func TestMarkdownCell(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "–",
		"a|b":              `a\|b`,
		"two\nlines\r\n":   "two lines  ",
		"<script>&amp;":    "&lt;script&gt;&amp;amp;",
		"tenant-a 5/1s ok": "tenant-a 5/1s ok",
	} {
		assert.Equal(t, want, mdCell(in), "mdCell(%q)", in)
	}
}

// An input whose lines were all filtered out has no sends: the writers must
// say so rather than point at line 0.
func TestCIEmptyResult(t *testing.T) {
	res := ciResult(t, []string{"a.log"}, mustRules(t, "5/1s,500/1m"), 4, false, nil)
	for name, write := range map[string]func(io.Writer, *Result) error{
		"junit": writeJUnit, "github": writeGitHub, "summary": writeStepSummary,
	} {
		var b bytes.Buffer
		require.NoError(t, write(&b, res), name)
		if name == "github" {
			assert.True(t, strings.HasPrefix(b.String(), "::warning "), "github: want a warning, got %q", b.String())
		}
		for _, bad := range []string{"a.log:0", "line 0", "1970"} {
			assert.NotContains(t, b.String(), bad, "%s points at line 0", name)
		}
	}
}

// ghParse reads ::error lines back: each command's properties, unescaped,
// and its message.
func ghParse(t *testing.T, out string) (props []map[string]string, msgs []string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		cmd, msg, ok := strings.Cut(strings.TrimPrefix(l, "::error "), "::")
		require.True(t, strings.HasPrefix(l, "::error ") && ok, "not an ::error command: %q", l)
		p := map[string]string{}
		for _, kv := range strings.Split(cmd, ",") {
			k, v, ok := strings.Cut(kv, "=")
			require.True(t, ok && !strings.ContainsAny(v, ":\r\n"), "property %q of %q is not escaped", kv, l)
			p[k] = ghUnescape(v)
		}
		require.False(t, strings.ContainsAny(msg, "\r\n"), "message %q: want newlines escaped", msg)
		props, msgs = append(props, p), append(msgs, ghUnescape(msg))
	}
	return props, msgs
}

// With --list N, --format github wrote one annotation per broken rule;
// it writes one per listed violation, on its file and line, and past ten
// a last one that sums up the rest.
func TestGitHubAnnotatesEachListedViolation(t *testing.T) {
	var times []int64
	for i := range 12 {
		times = append(times, int64(i)*int64(100*time.Millisecond)) // 10 a second: 2/1s breaks 10 times
	}
	times = append(times, 5000000000, 5000000001, 5000000002) // 3/10s breaks too
	name := "logs/api,east:50%.csv"
	for _, list := range []int{3, 20} {
		res := listedResult(t, name, mustRules(t, "2/1s,3/10s"), list, times)
		var b bytes.Buffer
		require.NoError(t, writeGitHub(&b, res))
		props, msgs := ghParse(t, b.String())
		var listed []checker.Violation
		for _, r := range res.Groups[0].Report.Rules {
			require.Len(t, r.Listed, int(min(int64(list), r.Violations)))
			listed = append(listed, r.Listed...)
		}
		want := len(listed)
		if want > ghMaxAnnotations {
			want = ghMaxAnnotations
			assert.Contains(t, msgs[want-1], fmt.Sprintf("%d more annotations left out", len(listed)-(ghMaxAnnotations-1)), "list %d", list)
		}
		require.Len(t, props, want, "list %d:\n%s", list, b.String())
		annotated := map[string]bool{}
		for i, p := range props[:min(len(listed), ghMaxAnnotations-1)] {
			assert.Equal(t, name, p["file"], "annotation %d", i)
			annotated[p["line"]+" "+p["title"]] = true
			assert.Contains(t, msgs[i], "violation ")
		}
		// Every broken rule shows among the first annotations, and each
		// annotation is on a listed violation's line.
		for ri, r := range res.Groups[0].Report.Rules {
			assert.True(t, annotated[strconv.FormatInt(Ref(r.Listed[0].Send.Ref).Line(), 10)+" rlcheck: "+r.Rule.String()+" broken"], "rule %d's first violation", ri)
		}
		for k := range annotated {
			found := false
			for _, v := range listed {
				found = found || strings.HasPrefix(k, strconv.FormatInt(Ref(v.Send.Ref).Line(), 10)+" ")
			}
			assert.True(t, found, "annotation %q is on no listed violation", k)
		}
	}
}

// listedResult is the result of one file of sends at times, one a line,
// checked with the first list violations of each rule listed.
func listedResult(t *testing.T, name string, rules []rule.Rule, list int, times []int64) *Result {
	t.Helper()
	c := checker.New(checker.Config{Rules: rules, List: list})
	for i, at := range times {
		require.NoError(t, c.Observe(at, int64(MakeRef(0, int64(i+1)))))
	}
	res := New(Result{Rules: rules}, []Group{{Report: c.Report()}})
	res.Files = []FileInfo{{Name: name, Format: "plain", Lines: int64(len(times)), Sends: int64(len(times))}}
	return res
}

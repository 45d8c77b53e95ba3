package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's shape: short, with the install and a check of the user's
// own CSV near its top (the rest of the manual is docs/).
const (
	readmeMaxLines     = 250
	readmeInstallBy    = 40
	readmeCheckCSVBy   = 80
	readmeInstallShown = "go install ./cmd/rlcheck"
)

// readmeCheckCSV is a shown check of a CSV file, run by TestDocs.
var readmeCheckCSV = regexp.MustCompile(`^\$ rlcheck check .*\S+\.csv$`)

// TestReadmeStartsWithTheUsersLog: README.md is at most readmeMaxLines
// lines, shows how to install within its first readmeInstallBy lines and a
// check of a CSV log within its first readmeCheckCSVBy, and keeps the two
// commands a new user needs: the main job (a check) and the test suite.
func TestReadmeStartsWithTheUsersLog(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	assertReadmeShape(t, string(data))
}

func assertReadmeShape(t assert.TestingT, readme string) bool {
	lines := strings.Split(strings.TrimSuffix(readme, "\n"), "\n")
	ok := assert.LessOrEqual(t, len(lines), readmeMaxLines, "README.md lines; the rest belongs in docs/")
	install := firstLine(lines, func(l string) bool { return strings.Contains(l, readmeInstallShown) })
	ok = assert.True(t, install > 0 && install <= readmeInstallBy,
		"README.md shows %q on line %d; want it within the first %d", readmeInstallShown, install, readmeInstallBy) && ok
	check := firstLine(lines, readmeCheckCSV.MatchString)
	ok = assert.True(t, check > 0 && check <= readmeCheckCSVBy,
		"README.md shows a check of a CSV ($ rlcheck check ... FILE.csv) on line %d; want it within the first %d", check, readmeCheckCSVBy) && ok
	return assert.Contains(t, readme, "\ngo test ./...", "README.md shows the test command") && ok
}

// firstLine is the 1-based number of the first line matching, 0 if none.
func firstLine(lines []string, match func(string) bool) int {
	for i, l := range lines {
		if match(l) {
			return i + 1
		}
	}
	return 0
}

func TestReadmeShapeCatchesEachLimit(t *testing.T) {
	var good []string
	good = append(good, "# rlcheck", "", "```sh", readmeInstallShown, "```", "", "```console",
		"$ rlcheck check --rules 10/s docs/examples/sends.csv", "```", "", "```sh", "go test ./...", "```")
	assert.True(t, assertReadmeShape(t, strings.Join(good, "\n")+"\n"))

	pad := func(n int) []string { return make([]string, n) }
	for name, lines := range map[string][]string{
		"too long":       append(append([]string{}, good...), pad(readmeMaxLines)...),
		"install late":   append(append([]string{good[0]}, pad(readmeInstallBy)...), good[1:]...),
		"check late":     append(append(append([]string{}, good[:6]...), pad(readmeCheckCSVBy)...), good[6:]...),
		"no check":       append(append([]string{}, good[:6]...), good[9:]...),
		"no test suite":  good[:10],
		"check no csv":   append(append(append([]string{}, good[:7]...), "$ rlcheck check --rules 10/s docs/examples/sends.txt"), good[8:]...),
		"install absent": append([]string{good[0]}, good[4:]...),
	} {
		rec := &recordingT{}
		assert.False(t, assertReadmeShape(rec, strings.Join(lines, "\n")+"\n"), name)
		assert.NotEmpty(t, rec.errors, name)
	}
}

type recordingT struct{ errors []string }

func (r *recordingT) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }

// TestDocsIndexLinksEveryPage: docs/index.md links every page of docs/,
// so the manual has one table of contents.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	index, err := os.ReadFile("../../docs/index.md")
	require.NoError(t, err)
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, l := range mdLinks(string(index)) {
		linked[strings.SplitN(l, "#", 2)[0]] = true
	}
	for _, p := range pages {
		if name := filepath.Base(p); name != "index.md" {
			assert.True(t, linked[name], "docs/index.md does not link %s", name)
		}
	}
}

// TestDocsLinksResolve: every relative link in README.md, CONTRIBUTING.md
// and docs/*.md names a file that exists and, with a #fragment into a
// Markdown page, a heading of that page, so that moving a section cannot
// leave a link behind.
func TestDocsLinksResolve(t *testing.T) {
	t.Chdir("../..")
	anchors := map[string]map[string]bool{}
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, link := range mdLinks(string(data)) {
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(link, "#")
			target := page
			if file != "" {
				target = filepath.Join(filepath.Dir(page), file)
			}
			_, err := os.Stat(target)
			if !assert.NoError(t, err, "%s links %s", page, link) || frag == "" || !strings.HasSuffix(target, ".md") {
				continue
			}
			if anchors[target] == nil {
				md, err := os.ReadFile(target)
				require.NoError(t, err)
				anchors[target] = headingAnchors(string(md))
			}
			assert.True(t, anchors[target][frag], "%s links %s: %s has no heading with that anchor", page, link, target)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdLinks is the targets of the page's inline links and images, outside
// code blocks.
func mdLinks(md string) []string {
	var out []string
	for _, l := range mdLink.FindAllStringSubmatch(stripCodeBlocks(md), -1) {
		out = append(out, l[1])
	}
	return out
}

func stripCodeBlocks(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// headingAnchors is the anchors GitHub gives the page's headings: lower
// case, spaces to hyphens, punctuation other than - and _ dropped, and -1,
// -2... after repeats.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range strings.Split(stripCodeBlocks(md), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// diary matches what a dated measurement diary carries: times of day in
// UTC, "round N" histories, and dates written out.
var diary = regexp.MustCompile(`\d\d:\d\d([-–]\d\d:\d\d)? UTC|\b[Rr]ound (one|two|three|four|five|six|seven|eight|nine|ten|\d+)\b|\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b`)

// TestDocsCarryNoDiary: no page of the manual is a dated measurement diary;
// git keeps the history, the pages keep the method, machine, command and
// result.
func TestDocsCarryNoDiary(t *testing.T) {
	t.Chdir("../..")
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		for i, l := range strings.Split(string(data), "\n") {
			assert.False(t, diary.MatchString(l), "%s:%d reads like a diary (%q): %s", page, i+1, diary.FindString(l), l)
		}
	}
}

func TestDiaryPattern(t *testing.T) {
	for _, s := range []string{"Round six: values back", "at 05:44 UTC on", "00:18-00:34 UTC", "00:18–00:34 UTC", "in round 3 the", "(30 Nov 2026, 20:25)", "1 December 2026"} {
		assert.True(t, diary.MatchString(s), s)
	}
	for _, s := range []string{"a Redis round trip of 0.4 ms", "around 20 ms", "2026-01-01T00:00:00.100000000Z", "rounds to 3", "10/s, 500/min"} {
		assert.False(t, diary.MatchString(s), s)
	}
}

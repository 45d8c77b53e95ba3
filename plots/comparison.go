package plots

import (
	"fmt"
	"strconv"
	"strings"
)

// Comparison draws a horizontal bar chart of the violations of every rule
// per strategy, each strategy labelled with its run's duration, and writes it
// to path (.png or .svg).
func Comparison(path string, s Summary) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	if err := s.check("comparison"); err != nil {
		return err
	}
	groups := make([]barGroup, len(s.Strategies))
	for i, r := range s.Strategies {
		g := barGroup{name: strategyLabel(r), color: StrategyColor(r.Name)}
		for k, ru := range s.Rules {
			if k < len(r.Violations) {
				g.values = append(g.values, float64(r.Violations[k]))
				g.labels = append(g.labels, fmt.Sprintf("%s: %s", ru, plural(r.Violations[k], "violation")))
			} else {
				g.values = append(g.values, 0)
				g.labels = append(g.labels, ru.String()+": not recorded")
			}
		}
		groups[i] = g
	}
	p, hgt, err := groupedBars("", "violations: sends that found their window already full", groups, len(s.Rules), true)
	if err != nil {
		return err
	}
	title := "Violations per strategy and rule"
	return drawBars(path, title, subtitleOf(s, "one bar per rule, the run's duration in brackets"), p, hgt)
}

func subtitleOf(s Summary, note string) string {
	if s.Title == "" {
		return note
	}
	return s.Title + " · " + note
}

func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return thousands(n) + " " + word + "s"
}

// thousands groups digits with commas (12,345,678) so big counts read at a glance.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

package metrics

import (
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/keytext"
)

// OtherKeys is the key label of the series that sums up every key past a
// KeyLabels cap.
const OtherKeys = "(other keys)"

// DefaultMaxKeys is how many keys get series of their own when a command
// is not told otherwise.
const DefaultMaxKeys = 100

// KeyLabels hands out the key label of the per-key series of the live
// commands (serve, watch), so that what a scrape returns stays bounded
// whatever the number of keys: the first Max keys seen keep a label of
// their own, their name as keytext.Show writes it, for as long as the
// command runs; every later key is labelled OtherKeys. Labels never move,
// so every counter stays monotonic. The zero value gives every key
// OtherKeys. It is not safe for concurrent use.
type KeyLabels struct {
	Max   int
	given map[string]bool
}

// NewKeyLabels returns labels for max keys of their own (0: DefaultMaxKeys;
// negative: none).
func NewKeyLabels(max int) *KeyLabels {
	if max == 0 {
		max = DefaultMaxKeys
	}
	return &KeyLabels{Max: max}
}

// Label returns key's label.
func (l *KeyLabels) Label(key string) string {
	shown := keytext.Show(key)
	if l.given[shown] {
		return shown
	}
	if len(l.given) >= l.Max {
		return OtherKeys
	}
	if l.given == nil {
		l.given = map[string]bool{}
	}
	l.given[shown] = true
	return shown
}

// KeySeries is what one key label shows, per rule: the fullest window
// ending now over its keys (Current), the fullest window ever (Peak) and
// the violations; and the in-flight cap's violations (Cap).
type KeySeries struct {
	Current, Peak, Violations []int64
	Cap                       int64
}

// NewKeySeries returns an empty series for rules rules.
func NewKeySeries(rules int) *KeySeries {
	return &KeySeries{Current: make([]int64, rules), Peak: make([]int64, rules), Violations: make([]int64, rules)}
}

// Add folds in one key's verdict, read from its checker rule by rule
// (checker.Checker.Tally) so that a scrape over every live key builds no
// report per key; current, when not nil, returns what the key's window of
// rule i holds now. capViolations is the key's violations of the
// in-flight cap.
func (g *KeySeries) Add(chk *checker.Checker, current func(i int) int64, capViolations int64) {
	for i := range g.Peak {
		v, m := chk.Tally(i)
		if current != nil {
			g.Current[i] = max(g.Current[i], current(i))
		}
		g.Peak[i] = max(g.Peak[i], m)
		g.Violations[i] += v
	}
	g.Cap += capViolations
}

// Merge folds in another series.
func (g *KeySeries) Merge(o *KeySeries) {
	for i := range g.Current {
		g.Current[i] = max(g.Current[i], o.Current[i])
		g.Peak[i] = max(g.Peak[i], o.Peak[i])
		g.Violations[i] += o.Violations[i]
	}
	g.Cap += o.Cap
}

package infer

import (
	"math/bits"
	"slices"

	"github.com/rlcheck/rlcheck/rule"
)

// bitset is a set of refused calls, by their rank among the refusals.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) add(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// union returns the union of the candidates' sets.
func union(n int, cs []*Candidate) bitset {
	u := newBitset(n)
	for _, c := range cs {
		for i, w := range c.set {
			u[i] |= w
		}
	}
	return u
}

// maxExhaustive bounds the word operations the exhaustive search may spend
// (combinations times words); past it the search is greedy.
const (
	maxExhaustive = 400_000_000
	maxRules      = 4
)

// fit finds the smallest set of candidates that explains every refusal.
func fit(d *sends, cands []*Candidate, rd Reading) Fit {
	n := len(d.refIdx)
	f := Fit{Reading: rd, Fits: true, Smallest: true}
	if n == 0 {
		return f
	}
	var useful []*Candidate
	for _, c := range cands {
		if c.Explains > 0 {
			useful = append(useful, c)
		}
	}
	if all := union(n, useful); all.count() < n {
		f.Fits, f.Smallest = false, false
		f.Unexplained, f.Unexplaineds = unexplained(d, cands, all, rd)
		return f
	}
	reps := distinct(useful)
	covers := exhaustive(n, reps)
	if covers == nil {
		f.Smallest, f.Unproved = false, unprovedGreedy
		covers = [][]*Candidate{greedy(n, reps)}
	}
	// Windows first: a cover with fewer buckets wins, then one that
	// meters fewer units, then the best score.
	bestScore, best := -1.0, [2]int{}
	same := alike(reps, useful)
	for _, cv := range covers {
		cv = inFewerUnits(cv, same)
		key := coverKey(cv)
		if bestScore >= 0 && slices.Compare(key[:], best[:]) > 0 {
			continue
		}
		rules, score := ranges(d, cv, rd)
		if score > bestScore || slices.Compare(key[:], best[:]) < 0 {
			f.Rules, bestScore, best = rules, score, key
		}
	}
	alsoFits(n, f.Rules, useful)
	return f
}

// coverKey orders covers of one size, the least first: by the buckets
// they hold, then by the units they meter (a contract in fewer units is
// the simpler one: a provider that meters tokens is not taken to meter
// calls too where a bucket or window on tokens fits as well).
func coverKey(cv []*Candidate) [2]int {
	nb := 0
	var units []string
	for _, c := range cv {
		if c.Kind == rule.Bucket {
			nb++
		}
		if !slices.Contains(units, c.Unit) {
			units = append(units, c.Unit)
		}
	}
	return [2]int{nb, len(units)}
}

// alike maps each of reps to the candidates of useful that explain the
// same refusals (distinct keeps one of them).
func alike(reps, useful []*Candidate) map[*Candidate][]*Candidate {
	same := map[*Candidate][]*Candidate{}
	for _, r := range reps {
		for _, c := range useful {
			if c != r && slices.Equal(c.set, r.set) {
				same[r] = append(same[r], c)
			}
		}
	}
	return same
}

// inFewerUnits is cv in as few units as its rules and those that explain
// the same refusals as one of them allow: for each unit, every rule that
// has a rule of that unit and of its kind (bucket or window) alike is
// replaced by it, and the rewrite in the fewest units is kept (cv where
// none meters fewer).
func inFewerUnits(cv []*Candidate, same map[*Candidate][]*Candidate) []*Candidate {
	var units []string
	for _, c := range cv {
		for _, o := range append([]*Candidate{c}, same[c]...) {
			if !slices.Contains(units, o.Unit) {
				units = append(units, o.Unit)
			}
		}
	}
	best := cv
	for _, u := range units {
		out := slices.Clone(cv)
		for k, c := range cv {
			i := slices.IndexFunc(same[c], func(o *Candidate) bool {
				return o.Unit == u && (o.Kind == rule.Bucket) == (c.Kind == rule.Bucket)
			})
			if c.Unit != u && i >= 0 {
				out[k] = same[c][i]
			}
		}
		if k, b := coverKey(out), coverKey(best); slices.Compare(k[:], b[:]) < 0 {
			best = out
		}
	}
	return best
}

// settle makes a fit's rules, once their ranges are final, the contract it
// prints: rules that print the same are one rule, and the set is called
// the smallest only where that is proved. The cover search is exhaustive
// over the windows and the buckets it tried; proof says what the exact
// bucket search adds: no bucket of any rate and burst alone, nor beside
// one window, explains every refusal. Sets of two buckets or more are not
// searched at every rate and burst.
func (f *Fit) settle(proof bucketProof) {
	if !f.Fits {
		return
	}
	f.Rules = oncePrinted(f.Rules)
	for i := range f.Rules {
		f.Rules[i].Confidence /= float64(1 + len(f.Rules[i].AlsoFits))
	}
	switch {
	case len(f.Rules) <= 1:
		f.Smallest, f.Unproved = true, "" // a refusal needs a rule
	case !f.Smallest:
	case !proof.single:
		f.Smallest, f.Unproved = false, unprovedSingle
	case len(f.Rules) == 3 && !proof.pairs:
		f.Smallest, f.Unproved = false, unprovedPairs
	case len(f.Rules) >= 3:
		f.Smallest, f.Unproved = false, unprovedBuckets
	}
}

// Why a contract that fits is not proved the smallest (Fit.Unproved).
const (
	unprovedGreedy    = "the search was greedy: a smaller set may exist"
	unprovedSingle    = "a single token bucket was not ruled out at every rate and burst (the search ran out of budget)"
	unprovedPairs     = "a window beside one token bucket was not ruled out at every rate and burst (the search ran out of budget)"
	unprovedTolerance = "within a tolerance token buckets are searched on a sample of rates and bursts only: fewer rules off the sample may explain the refusals"
	unprovedBuckets   = "sets of two token buckets or more are searched on a sample of rates and bursts only: fewer rules off the sample may explain the refusals"
)

// oncePrinted keeps one of the rules that print the same: as a contract
// they are one rule.
func oncePrinted(rules []Rule) []Rule {
	var out []Rule
	for _, r := range rules {
		if !slices.ContainsFunc(out, func(o Rule) bool { return o.Rule().String() == r.Rule().String() }) {
			out = append(out, r)
		}
	}
	return out
}

// distinct keeps one candidate per distinct set of explained refusals, the
// first (shortest window, sliding before fixed).
func distinct(cs []*Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range cs {
		if !slices.ContainsFunc(out, func(o *Candidate) bool { return slices.Equal(o.set, c.set) }) {
			out = append(out, c)
		}
	}
	return out
}

// exhaustive returns every cover of the least size up to maxRules, or nil
// when there is none that small or the search would cost too much.
func exhaustive(n int, reps []*Candidate) [][]*Candidate {
	words := len(newBitset(n))
	var covers [][]*Candidate
	combos := 1
	for size := 1; size <= maxRules && size <= len(reps); size++ {
		combos = combos * (len(reps) - size + 1) / size
		if combos*words > maxExhaustive {
			return nil
		}
		idx := make([]int, size)
		for i := range idx {
			idx[i] = i
		}
		for {
			if coversAll(n, words, reps, idx) {
				cv := make([]*Candidate, size)
				for i, j := range idx {
					cv[i] = reps[j]
				}
				covers = append(covers, cv)
			}
			if !nextCombo(idx, len(reps)) {
				break
			}
		}
		if covers != nil {
			return covers
		}
	}
	return nil
}

// coversAll reports whether the candidates reps[idx] explain every one of
// the n refusals (the union of their sets counts n), a word at a time: it
// stops at the first word they leave short.
func coversAll(n, words int, reps []*Candidate, idx []int) bool {
	total := 0
	for w := range words {
		var u uint64
		for _, j := range idx {
			u |= reps[j].set[w]
		}
		c := bits.OnesCount64(u)
		if c < min(64, n-64*w) {
			return false
		}
		total += c
	}
	return total == n
}

// nextCombo advances idx to the next combination of len(idx) of m.
func nextCombo(idx []int, m int) bool {
	k := len(idx)
	i := k - 1
	for i >= 0 && idx[i] == m-k+i {
		i--
	}
	if i < 0 {
		return false
	}
	idx[i]++
	for j := i + 1; j < k; j++ {
		idx[j] = idx[j-1] + 1
	}
	return true
}

// greedy covers the refusals by taking, each time, the candidate that
// explains the most of those left, then drops any rule the others cover.
func greedy(n int, reps []*Candidate) []*Candidate {
	var cv []*Candidate
	left := union(n, reps)
	for left.count() > 0 {
		var pick *Candidate
		most := 0
		for _, c := range reps {
			k := 0
			for i, w := range c.set {
				k += bits.OnesCount64(w & left[i])
			}
			if k > most {
				pick, most = c, k
			}
		}
		cv = append(cv, pick)
		for i, w := range pick.set {
			left[i] &^= w
		}
	}
	for i := len(cv) - 1; i >= 0 && len(cv) > 1; i-- {
		rest := slices.Concat(cv[:i], cv[i+1:])
		if union(n, rest).count() == n {
			cv = rest
		}
	}
	return cv
}

// ranges bounds each rule of a cover, the others at their least N, and
// scores the cover: the sum of the confidences, then the pins.
func ranges(d *sends, cv []*Candidate, rd Reading) ([]Rule, float64) {
	n := len(d.refIdx)
	var rules []Rule
	score := 0.0
	for k, c := range cv {
		others := union(n, slices.Concat(cv[:k], cv[k+1:]))
		r := Rule{
			Window: c.Window, Kind: c.Kind, Unit: c.Unit, Min: c.AtLeast, MinPins: c.AtLeastPins, perDay: c.PerDay,
			TightestLine: c.TightestLine, Explains: c.Explains,
		}
		p := c.pass
		if c.Kind == rule.Bucket {
			p = c.passOf(d)
		}
		for i := range d.refIdx {
			if !c.set.has(i) || others.has(i) {
				continue
			}
			b := p.bound(rd, i)
			switch {
			case r.Max == 0 || b < r.Max:
				r.Max, r.MaxPins, r.ClosestRefusedLine = b, 1, d.line[d.refIdx[i]]
			case b == r.Max:
				r.MaxPins++
			}
		}
		if r.Max > 0 {
			r.Confidence = float64(r.Min) / float64(r.Max)
		}
		score += r.Confidence + float64(r.MinPins+r.MaxPins)/float64(2*(d.n()+1))
		rules = append(rules, r)
	}
	return rules, score
}

func (d *sends) n() int { return len(d.at) }

// alsoFits lists, for each rule, the candidates that could replace it:
// windows at their least N, and one bucket a unit, named on the grid at
// the rate found (another shape that fits as well). A rule another shape
// can replace has its confidence divided by the shapes that fit.
func alsoFits(n int, rules []Rule, cands []*Candidate) {
	for k := range rules {
		var others []*Candidate
		for j, r := range rules {
			if j != k {
				others = append(others, find(cands, r))
			}
		}
		buckets := map[string]bool{rules[k].Unit: rules[k].Kind == rule.Bucket}
		for _, c := range cands {
			if c.Kind == rule.Bucket && buckets[c.Unit] || c.Kind != rule.Bucket && c.Window == rules[k].Window && c.Kind == rules[k].Kind && c.Unit == rules[k].Unit {
				continue
			}
			if union(n, append(others, c)).count() < n {
				continue
			}
			alt := Rule{Window: c.Window, Kind: c.Kind, Unit: c.Unit, Min: c.AtLeast}
			if c.Kind == rule.Bucket {
				buckets[c.Unit] = true
				alt.Window, alt.Rate = nameRate(c.PerDay, c.PerDay, c.PerDay, windowGrid)
				alt.Burst = c.AtLeast
			}
			rules[k].AlsoFits = append(rules[k].AlsoFits, alt.Rule())
		}
	}
}

// find is the candidate rule r was made from: a bucket by its unit, rate
// and burst (two buckets at one rate may differ in burst), a window by its
// kind, unit and window.
func find(cands []*Candidate, r Rule) *Candidate {
	for _, c := range cands {
		if c.Kind == r.Kind && c.Unit == r.Unit && (c.Kind == rule.Bucket && c.PerDay == r.perDay && c.AtLeast == r.Min || c.Kind != rule.Bucket && c.Window == r.Window) {
			return c
		}
	}
	panic("infer: a chosen rule is not among the candidates")
}

// unexplained lists the refusals no candidate explains, each with the
// window where it came closest.
func unexplained(d *sends, cands []*Candidate, all bitset, rd Reading) ([]Unexplained, int) {
	var out []Unexplained
	total := 0
	for r, i := range d.refIdx {
		if all.has(r) {
			continue
		}
		total++
		if len(out) == maxUnexplained {
			continue
		}
		var u Unexplained
		gap := -1
		for _, c := range cands {
			if c.Unit != "" || c.Kind == rule.Bucket {
				continue // the closest call window says most
			}
			b := c.pass.bound(rd, r)
			if g := c.AtLeast - b; gap < 0 || g < gap {
				gap = g
				u = Unexplained{Line: d.line[i], At: d.at[i], Window: c.Window, Kind: c.Kind, Before: b, AtLeast: c.AtLeast, TightestLine: c.TightestLine}
			}
		}
		out = append(out, u)
	}
	return out, total
}

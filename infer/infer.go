package infer

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// Send is one call of the log: when it was sent (integer ns), whether the
// provider refused it, and its line for reports.
type Send struct {
	At      int64
	Refused bool
	Line    int64
	// Ann is what the answer's rate-limit headers announced; nil without.
	Ann *Announced
	// Cost is the call's cost in each unit of Options.Units, in order
	// (nil without units). Each unit's costs must sum within int64 over
	// the log: Read refuses a log whose sums do not.
	Cost []int64
}

// Options tune the inference; the zero value infers on windowGrid.
type Options struct {
	// Windows are the window lengths tried; nil means windowGrid.
	Windows []time.Duration
	// Declared, when set, is a contract to set beside the log
	// (Result.Declared); its rules must pass CheckDeclared. Closed says its
	// sliding windows are closed.
	Declared []rule.Rule
	Closed   bool
	// spreadGrid is the ladder tried when no contract fits exactly (see
	// Tolerance); nil means spreadGrid, empty tries none.
	spreadGrid []time.Duration
	// Units name the cost units of each Send.Cost: for each, cost rules
	// "N UNIT/W" are inferred beside the call rules.
	Units []string
	// Delay, when positive, says the log's instants are the client's and
	// each call reached the provider up to Delay after its logged instant
	// (the clock offset tried as Tolerance does): the contract reported is
	// the one that fits within a spread of Delay, whether or not one fits
	// exactly, and every range holds every value that fits within it.
	// Where none does, the ladder is climbed above Delay. A delay beyond
	// MaxDelay is taken as MaxDelay.
	Delay time.Duration
}

// MaxDelay is the longest Options.Delay: a day, far past any network's
// delay, and short enough that no instant of a log plus it overflows.
const MaxDelay = 24 * time.Hour

// Candidate is one window and kind under one reading: the least limit the
// accepted calls allow, and the refusals that limit explains.
type Candidate struct {
	Window  time.Duration
	Kind    rule.Kind
	Reading Reading
	// Unit is a cost rule's unit; "" counts calls.
	Unit string
	// PerDay is a bucket's rate, in units a day (Window is then a day);
	// its AtLeast and Explains are for the burst.
	PerDay int64
	// AtLeast is the least N no accepted call exceeds; AtLeastPins the
	// accepted calls whose window held AtLeast-1 earlier calls, the first
	// of them on TightestLine (0 when no call was accepted).
	AtLeast, AtLeastPins int
	TightestLine         int64
	// Explains counts the refused calls whose window held AtLeast or more
	// earlier calls: those a rule AtLeast/Window refuses.
	Explains int
	// Steps is the pass's cost: pointer moves over the sorted calls, at
	// most two per call.
	Steps int64

	pass *pass
	set  bitset
}

// Rule is a rule of the inferred contract: N lies in [Min, Max] (Max 0:
// no upper bound was observed).
type Rule struct {
	Window   time.Duration
	Kind     rule.Kind
	Unit     string // a cost rule's unit; "" counts calls
	Min, Max int
	// MinPins accepted calls found Min-1 earlier calls in their window,
	// the first on TightestLine; MaxPins refused calls that only this rule
	// explains found Max, the first on ClosestRefusedLine.
	MinPins, MaxPins   int
	TightestLine       int64
	ClosestRefusedLine int64
	// Explains counts the refusals the rule explains at N = Min.
	Explains int
	// Confidence is Min/Max: the share of the range the traffic probed,
	// 1 when it pinned N exactly, 0 without an upper bound; for a bucket
	// the least of the burst's and the rate's shares. It is divided by the
	// shapes that fit in the rule's place (1 + len(AlsoFits)): 1 only
	// where no other rule of the searched shapes fits.
	Confidence float64
	// AlsoFits are other rules that could replace this one, the other
	// rules unchanged, each at its least N (buckets are not listed).
	AlsoFits []rule.Rule
	// A bucket rule refills Rate units per Window with capacity Burst, the
	// least burst at that rate; Min and Max bound the burst over every rate
	// the log allows, from RateMin to RateMax units a day.
	Rate, Burst      int
	RateMin, RateMax int64
	// RateOpen: the log sets no upper bound on a bucket's rate (RateMax is
	// the most searched). Outer: the bucket's ranges bound its region from
	// outside (a call another rule refused may have drained it) and may
	// be wider than the values that fit; they hold every one all the same.
	RateOpen, Outer bool
	perDay          int64 // the rate of the candidate chosen
}

// Rule returns the rule at its least N: the most the provider is known to
// allow.
func (r Rule) Rule() rule.Rule {
	if r.Kind == rule.Bucket {
		return rule.Rule{Limit: r.Rate, Window: r.Window, Kind: r.Kind, Unit: r.Unit, Burst: r.Burst}
	}
	return rule.Rule{Limit: r.Min, Window: r.Window, Kind: r.Kind, Unit: r.Unit}
}

// Exact is the rule as a contract file should hold it: a bucket at the
// very rate found, not Rate rounded to a whole number per Window (a rate
// rounded down drains the bucket faster than the log allows, one rounded
// up may let a refused call drain it). The rate is written per the
// shortest of Window, 1s, 1m, 1h and 1d that makes it a whole number; a
// rate a day always is one.
func (r Rule) Exact() rule.Rule {
	out := r.Rule()
	if r.Kind != rule.Bucket || r.perDay <= 0 {
		return out
	}
	const day = int64(24 * time.Hour)
	for _, w := range []time.Duration{r.Window, time.Second, time.Minute, time.Hour, 24 * time.Hour} {
		if n := day / int64(w); day%int64(w) == 0 && r.perDay%n == 0 && r.perDay/n <= math.MaxInt32 {
			out.Limit, out.Window = int(r.perDay/n), w
			return out
		}
	}
	return out
}

// Unexplained is a refused call no rule on the grid explains: in every
// window, an accepted call found as many earlier calls or more. Closest
// names the window where it came nearest.
type Unexplained struct {
	Line, At int64
	Window   time.Duration
	Kind     rule.Kind
	// Before calls preceded it in its window; the accepted call on
	// TightestLine had AtLeast-1 > Before in its own.
	Before, AtLeast int
	TightestLine    int64
}

// Fit is the smallest contract found under one reading.
type Fit struct {
	Reading Reading
	// Fits is false when some refusal is unexplained (see Unexplained).
	Fits  bool
	Rules []Rule
	// Smallest is true when no smaller set of rules on the searched
	// windows and kinds explains the refusals: one rule, or an exhaustive
	// search whose rules are all windows. Unproved says why it is false
	// for a contract that fits.
	Smallest     bool
	Unproved     string
	Unexplained  []Unexplained // the first few
	Unexplaineds int           // how many in all
	// Broken counts the accepted calls the rules, as Rule.Exact writes
	// them, would refuse (the bucket search samples, and can miss), the
	// first on BrokenLine; see Holds.
	Broken     int
	BrokenLine int64
	// Missed counts the refusals the rules, as Rule.Exact writes them,
	// leave unexplained, the first on MissedLine; see Holds.
	Missed     int
	MissedLine int64
}

// Result is the inference over one log (or one key of it).
type Result struct {
	Sends, Accepted, Refused int
	First, Last              int64
	Candidates               []Candidate // per window, kind and reading
	// Buckets are the token buckets the search kept (per rate and reading,
	// those no other candidate outdoes); BucketSteps the search's cost.
	Buckets     []Candidate
	BucketSteps int64
	Fits        [2]Fit // indexed by Reading
	// Best is the reading that fits with the fewest rules (RefusedCount
	// when both fit alike); BothFit says the log cannot tell them apart.
	Best    Reading
	BothFit bool
	// Declared sets Options.Declared beside the log, under Best; nil when
	// no contract was declared.
	Declared *Declared
	// Headers sets the rate-limit headers of the answers beside the
	// calls; nil when no answer carried one.
	Headers *Headers
	// Tolerance is what it takes to fit a log with refusals that no
	// contract fits exactly; nil when one does.
	Tolerance *Tolerance

	proof  [2]bucketProof   // what the exact bucket search proved, per reading
	paired map[pairKey]bool // the buckets pairWith paired
}

// maxUnexplained bounds the unexplained refusals a Fit lists.
const maxUnexplained = 10

// Infer bounds every window and kind and finds the smallest contract under
// each reading. The sends need not be sorted; equal times keep their order.
// The windows the sends' announced limits name join the grid.
func Infer(s []Send, opt Options) *Result {
	if !slices.IsSortedFunc(s, func(a, b Send) int { return cmp.Compare(a.At, b.At) }) {
		s = slices.Clone(s)
		slices.SortStableFunc(s, func(a, b Send) int { return cmp.Compare(a.At, b.At) })
	}
	windows := opt.Windows
	if windows == nil {
		windows = windowGrid
	}
	hs := collectHeaders(s)
	if hs != nil {
		windows = hs.grid(windows)
	}
	d := newSends(s)
	d.addCosts(s, opt.Units)
	res := &Result{Sends: len(s), Refused: len(d.refIdx), Accepted: len(s) - len(d.refIdx)}
	if len(s) > 0 {
		res.First, res.Last = s[0].At, s[len(s)-1].At
	}
	res.Candidates = windowCandidates(d, windows)
	res.Candidates = append(res.Candidates, costCandidates(d, windows)...)
	// Under a reading that a cover of one or two rules from the windows
	// and the exact buckets explains, the sampled search has nothing
	// smaller to find. Under the other, two buckets may fit as well: both
	// readings are searched alike before the answer picks one, so that a
	// reading found first does not hide one that ties with it. Beside each
	// bucket the exact search found next to a window, and each the sampled
	// search picks, the exact region of what it leaves may hold a second:
	// beside a window, another shape that fits in the window's place.
	covered := res.exactBuckets(d)
	res.pairWith(d, slices.Clone(res.Buckets), pairBudget(d))
	if max(covered[RefusedCount], covered[RefusedFree]) > 2 {
		res.bucketSearch(d)
		budget := pairBudget(d)
		res.thirdBuckets(d, budget-res.pairBuckets(d, budget))
	}
	for _, rd := range []Reading{RefusedCount, RefusedFree} {
		var cands []*Candidate
		for _, cs := range [][]Candidate{res.Candidates, res.Buckets} {
			for i := range cs {
				if cs[i].Reading == rd {
					cands = append(cands, &cs[i])
				}
			}
		}
		res.Fits[rd] = fit(d, cands, rd)
		res.BucketSteps += refineBuckets(d, &res.Fits[rd], cands, windows)
		res.Fits[rd].settle(res.proof[rd])
		res.Fits[rd].verify(s, opt.Units)
		res.Fits[rd].prune(s, opt.Units)
	}
	res.Best, res.BothFit = best(res.Fits)
	res.tolerate(d, windows, opt.spreadGrid, min(opt.Delay, MaxDelay))
	if hs != nil {
		hs.judge(d, res.Best)
		res.Headers = hs
	}
	if len(opt.Declared) > 0 {
		res.Declared = declare(d, opt.Declared, opt.Closed, res.Best)
	}
	return res
}

// tolerate looks for a contract within a tolerance when no contract fits
// exactly, and when the exact one needs two rules or more: a contract of
// fewer rules within a spread up to simplerSpread is reported beside it
// (Tolerance.Simpler) when the exact fit has a bucket: the exact search
// can explain the refusals a delay made with a bucket of its own, which
// hides the provider's contract. With a delay given, the fit within it
// is the answer (see Options.Delay).
func (res *Result) tolerate(d *sends, windows, spreads []time.Duration, delay time.Duration) {
	if spreads == nil {
		spreads = spreadGrid
	}
	f := res.Fits[res.Best]
	all := [2]int{math.MaxInt, math.MaxInt}
	switch {
	case res.Refused == 0:
	case delay > 0:
		res.Tolerance = tolerateDelay(d, windows, spreads, delay, exactSeeds(d, res))
	case len(spreads) == 0:
	case !f.Fits:
		res.Tolerance = tolerate(d, windows, spreads, all, [2][]seedBucket{}, bucketSpread)
	case len(f.Rules) > 1 && slices.ContainsFunc(f.Rules, func(r Rule) bool { return r.Kind == rule.Bucket }):
		short := spreads[:0:0]
		for _, sp := range spreads {
			if sp <= simplerSpread {
				short = append(short, sp)
			}
		}
		k := len(f.Rules)
		// A rule that fits within a spread fits within a wider one: the
		// widest tried first finds most logs with no simpler contract.
		if len(short) == 0 || !tolerateAs(d, windows, short[len(short)-1:], [2]int{k, k}, [2][]seedBucket{}, bucketSpread, k <= 2).Fits {
			return
		}
		if tol := tolerate(d, windows, short, [2]int{k, k}, [2][]seedBucket{}, bucketSpread); tol.Fits {
			tol.Simpler, res.Tolerance = true, tol
		}
	}
}

// tolerateDelay fits the log within a spread of delay, and where nothing
// does, climbs the spreads of the ladder above it as tolerate does. The
// buckets' ranges are those within delay, or the spread that fits. The
// buckets of the exact fits are tried beside the sampled ones: an exact
// fit is one within every spread, which the sampled search can miss.
func tolerateDelay(d *sends, windows, spreads []time.Duration, delay time.Duration, seeds [2][]seedBucket) *Tolerance {
	all := [2]int{math.MaxInt, math.MaxInt}
	tol := tolerate(d, windows, []time.Duration{delay}, all, seeds, delay)
	if above := slices.DeleteFunc(slices.Clone(spreads), func(sp time.Duration) bool { return sp <= delay }); !tol.Fits && len(above) > 0 {
		tol = tolerate(d, windows, above, all, seeds, delay)
	}
	tol.Delay = delay
	return tol
}

// bucketSearch tries buckets over a grid of rates and keeps those the
// cover search may need.
func (res *Result) bucketSearch(d *sends) {
	var rest [2]bitset
	for rd := range rest {
		var cs []*Candidate
		for i := range res.Candidates {
			if res.Candidates[i].Reading == Reading(rd) {
				cs = append(cs, &res.Candidates[i])
			}
		}
		rest[rd] = union(len(d.refIdx), cs)
	}
	buckets, steps := bucketCandidates(d, rest)
	all := make([]*Candidate, 0, len(res.Candidates)+len(buckets))
	for i := range res.Candidates {
		all = append(all, &res.Candidates[i])
	}
	for i := range buckets {
		all = append(all, &buckets[i])
	}
	res.Buckets = append(res.Buckets, undominated(buckets, all)...)
	res.BucketSteps += steps
}

// windowCandidates makes each window's pass of each kind, and its
// candidate under each reading, in that order: the passes are walked on
// every core, each into its own place.
func windowCandidates(d *sends, windows []time.Duration) []Candidate {
	readings := []Reading{RefusedCount, RefusedFree}
	per := len(windowKinds) * len(readings)
	out := make([]Candidate, len(windows)*per)
	eachOnCores(len(windows)*len(windowKinds), func(j int) {
		w, k := windows[j/len(windowKinds)], windowKinds[j%len(windowKinds)]
		p := d.count(int64(w), k)
		for r, rd := range readings {
			out[j*len(readings)+r] = newCandidate(d, p, w, k, rd)
		}
	})
	return out
}

func newCandidate(d *sends, p *pass, w time.Duration, k rule.Kind, rd Reading) Candidate {
	c := Candidate{
		Window: w, Kind: k, Reading: rd, Unit: p.unit, AtLeast: p.lower[rd], AtLeastPins: p.lowerPins[rd],
		Steps: p.steps, pass: p, set: newBitset(len(d.refIdx)),
	}
	if i := p.tightest[rd]; i >= 0 {
		c.TightestLine = d.line[i]
	}
	for r := range d.refIdx {
		if p.bound(rd, r) >= c.AtLeast {
			c.set.add(r)
			c.Explains++
		}
	}
	return c
}

// best picks the reading that fits with the fewest rules.
func best(f [2]Fit) (Reading, bool) {
	a, b := f[RefusedCount], f[RefusedFree]
	switch {
	case a.Fits && b.Fits && len(a.Rules) == len(b.Rules):
		return RefusedCount, true
	case a.Fits && (!b.Fits || len(a.Rules) < len(b.Rules)):
		return RefusedCount, false
	case b.Fits:
		return RefusedFree, false
	}
	return RefusedCount, false
}

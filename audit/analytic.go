package audit

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
)

// bucketWorst is the most calls a token bucket of capacity burst, refilled
// limit tokens per per and full at the start, admits in a half-open window
// of t ≥ 1 ns, on integer nanoseconds: the calls at instants 0 .. t−1, so
// the largest k ≤ burst + limit·(t−1)/per. The greedy schedule from a full
// bucket (burst at once, then one call per token) reaches it, so it is the
// exact worst case (TestBucketWorstBruteForce).
func bucketWorst(burst, limit int64, per, t time.Duration) int64 {
	num := new(big.Int).Mul(big.NewInt(burst), big.NewInt(int64(per)))
	num.Add(num, new(big.Int).Mul(big.NewInt(limit), big.NewInt(int64(t-1))))
	return clampBig(num.Div(num, big.NewInt(int64(per))))
}

// fixedWorst is the most calls windows of length per, limit each, admit
// in a half-open window of t ≥ 1 ns: limit for every window it touches,
// ⌈(t−1)/per⌉ + 1 of them at most (2N across one edge when t = per). It
// holds for windows aligned to a common origin and for windows that open
// at the first call after the previous one closed (ulule/limiter), whose
// starts lie at least per apart (TestFixedWorstBruteForce).
func fixedWorst(limit int64, per, t time.Duration) int64 {
	return mulClamp(limit, ceilDiv(int64(t-1), int64(per))+1)
}

// windowLimiter is one limiter of a chain of fixed windows: n calls per
// per, and the longest a caller it refused takes to be admitted once its
// next window opens (retry): the wake-up slack for windows aligned to a
// common origin, the retry spacing and that slack for windows that open at
// the first call after the previous one closed.
type windowLimiter struct {
	n          int64
	per, retry time.Duration
}

// chainWindowsWorst is the most calls the last of a chain of fixed-window
// limiters ws (in the order asked) admits in a half-open window of t ≥ 1,
// each caller asking the next limiter at most step after the previous
// one admitted it. For t+retry < per of the last limiter L it is
//
//	max(N_L, min(2·N_L, B(t + step)))
//
// with B the same bound for the chain without L; otherwise L's own
// fixedWorst. Proof, for a window [s, s+t) and e the first start of a
// window of L at or after s: the admissions in [s, e) are first tries,
// since the callers L refused before are admitted within retry of the
// start e' ≤ e − per of their window, before s; L admits all of a
// window's calls before it refuses any (its counter only grows). If
// none lie in [s, e), the rest lie in one window of L: at most N_L. If
// some do, every caller L refused before e was refused after them, at or
// after s, and every other admission lies in [s, s+t): each of them left
// the previous limiter in [s − step, s+t), so there are at most B(t +
// step) of them, and at most 2·N_L (two windows of L). The first term is
// reached whenever the earlier limiters let 2·N_L + 1 calls through
// within one window of L: N_L fill it, the others wait and are admitted
// together at the next start (within retry of it), so the bound is exact
// when B(t + step) ≤ N_L (TestChainWindowsWorstBruteForce).
func chainWindowsWorst(ws []windowLimiter, t, step time.Duration) int64 {
	last := ws[len(ws)-1]
	own := fixedWorst(last.n, last.per, t)
	if len(ws) == 1 || t+last.retry >= last.per {
		return own
	}
	return max(last.n, min(own, chainWindowsWorst(ws[:len(ws)-1], t+step, step)))
}

// logWorst is the most calls a sliding log of limit per per admits in a
// half-open window of t: limit·⌈t/per⌉ (limit at 0, per, 2·per, ...).
func logWorst(limit int64, per, t time.Duration) int64 {
	return mulClamp(limit, ceilDiv(int64(t), int64(per)))
}

// logPiece is one sliding log of a design that asks every log at once: n
// calls (or units) per per, for the rule at index rule.
type logPiece struct {
	n    int64
	per  time.Duration
	rule int
}

// logsWorst is the most calls sliding logs that judge every call together
// admit in a half-open window of t > 0, and the rule of the log that
// admits most of them: the least of Σ kᵢ·nᵢ over counts kᵢ ≥ 0
// with Σ kᵢ·perᵢ ≥ t. It is a bound: any window of t splits into
// consecutive half-open pieces of k₁ windows of log 1, k₂ of log 2, ...
// (the last cut short), and each piece holds at most its log's n. It is
// reached: the greedy schedule (every call as early as every log allows)
// fills some window of t with exactly that many
// (TestLogsWorstBruteForce). The least over one log alone (logWorst) can
// lie far above it: under 10/s and 500/min, a window of a minute and 3 ms
// holds at most 500 + 10, not 610.
func logsWorst(logs []logPiece, t time.Duration) (int64, int) {
	if len(logs) == 0 {
		return Unbounded, -1
	}
	c := &logCover{ls: slices.Clone(logs), best: math.MaxInt64}
	slices.SortStableFunc(c.ls, func(a, b logPiece) int { return cmp.Compare(b.per, a.per) })
	c.ks = make([]int64, len(c.ls))
	for i, l := range c.ls {
		// Each log alone is a cover: the search starts from the best.
		c.ks[i] = ceilDiv(int64(t), int64(l.per))
		c.record(mulClamp(c.ks[i], l.n))
		c.ks[i] = 0
	}
	c.walk(0, t, 0)
	by := 0
	for i, k := range c.bestK {
		if mulClamp(k, c.ls[i].n) > mulClamp(c.bestK[by], c.ls[by].n) {
			by = i
		}
	}
	return c.best, c.ls[by].rule
}

// maxCoverSteps caps logsWorst's search: past it, the best cover found
// so far is its answer, an upper bound still (every cover is one), at
// least as tight as each log's own.
const maxCoverSteps = 1 << 20

// logCover is logsWorst's search over the counts of each log, longest
// window first, the shortest's count then the fewest that cover the rest.
type logCover struct {
	ls        []logPiece
	ks, bestK []int64
	best      int64
	steps     int
}

func (c *logCover) record(v int64) {
	if v < c.best {
		c.best, c.bestK = v, slices.Clone(c.ks)
	}
}

func (c *logCover) walk(i int, t time.Duration, sum int64) {
	l := c.ls[i]
	if t <= 0 || i == len(c.ls)-1 {
		c.ks[i] = max(ceilDiv(int64(t), int64(l.per)), 0)
		c.record(satAdd(sum, mulClamp(c.ks[i], l.n)))
		c.ks[i] = 0
		return
	}
	for k := int64(0); k <= ceilDiv(int64(t), int64(l.per)) && c.steps < maxCoverSteps; k++ {
		c.steps++
		s := satAdd(sum, mulClamp(k, l.n))
		if s >= c.best {
			break
		}
		rest := t - time.Duration(k)*l.per
		if satAdd(s, c.lower(i+1, rest)) >= c.best {
			continue
		}
		c.ks[i] = k
		c.walk(i+1, rest, s)
	}
	c.ks[i] = 0
}

// lower is a floor under any cover of t by logs i..: t at the cheapest
// of their rates (rounded down a little against float error).
func (c *logCover) lower(i int, t time.Duration) int64 {
	if t <= 0 {
		return 0
	}
	r := math.Inf(1)
	for _, l := range c.ls[i:] {
		r = min(r, float64(l.n)/float64(l.per))
	}
	v := float64(t)*r*(1-1e-9) - 1
	if v >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return max(int64(v), 0)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a-1)/b + 1
}

func mulClamp(a, b int64) int64 {
	p := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
	return clampBig(p)
}

func clampBig(x *big.Int) int64 {
	if !x.IsInt64() {
		return 1<<63 - 1
	}
	return x.Int64()
}

// Unbounded marks a Bound with no analytic worst case.
const Unbounded = -1

// Bound is the analytic worst case of one rule for a design and setting:
// the most sends it can put in one window of the rule.
type Bound struct {
	Rule rule.Rule
	// Worst is that count, or Unbounded (Why says why).
	Worst int64
	// By is the index of the rule whose limiter gives Worst (-1 when
	// Unbounded); it differs from the rule's own when another binds.
	By  int
	Why string
}

// curve is one limiter of a design: the most calls it admits in a window.
type curve func(t time.Duration) int64

// boundsOf returns the analytic worst case of every rule for design d
// with cfg, under opt's rules, boundary and runtime. Each limiter bounds
// the calls it admits in any window (bucketWorst, fixedWorst, logWorst).
// Sends lag the last decision by up to a slack (a sleep's lateness, the op
// costs, the clock's grain: server TIME in µs, float seconds), so its
// bound holds on windows widened by that slack. In a chain of limiters
// asked in turn, a bucket or log passes the calls on as its tokens come,
// so the earlier limiters' bounds still hold, each later step widening
// the window once more; a fixed window lets every caller that waited for
// it go at its start, so only the last limiter's bound holds. A design
// whose sends no limiter bounds (two round trips, a timestamp member), or
// a runtime with unbounded lateness or op cost, has none.
func boundsOf(d design, cfg catalog.LibConfig, opt *Options) []Bound {
	rules := opt.Rules
	out := make([]Bound, len(rules))
	m := d.Model(cfg, opt)
	for j, r := range rules {
		out[j] = Bound{Rule: r, Worst: Unbounded, By: -1, Why: m.why}
		if m.curves == nil {
			continue
		}
		w := r.Window
		if opt.Boundary == rule.Closed {
			w++ // [t, t+W] holds what [t, t+W+1ns) holds
		}
		last := len(m.curves) - 1
		pos := askPositions(cfg, len(rules))
		for i, c := range m.curves {
			later := time.Duration(last - pos[i])
			if !m.chained {
				later = 0
			} else if pos[i] < last && !m.passes {
				continue
			}
			if rules[i].Unit != r.Unit || (m.chained && mixedAfter(rules, pos, i)) {
				continue // another unit's sum, or calls a later limiter of another unit bunched
			}
			v := c(w + m.send + later*m.step)
			if out[j].By < 0 || v < out[j].Worst || (v == out[j].Worst && i == j) {
				out[j].Worst, out[j].By = v, i
			}
		}
		if m.windows != nil && out[j].By >= 0 {
			// Each window of the last limiter lets its waiting crowd go
			// at once, but only as many as the earlier ones let through.
			out[j].Worst = min(out[j].Worst, chainWindowsWorst(m.windows, w+m.send, m.step))
		}
		if m.logs && out[j].By >= 0 {
			// The logs judge each call together: their joint bound.
			if v, by := logsWorst(logPieces(d, cfg, rules, r.Unit), w+m.send); v < out[j].Worst {
				out[j].Worst, out[j].By = v, by
			}
		}
		out[j].Why = ""
		if out[j].By < 0 {
			out[j].Why = chainedUnits
		}
	}
	return out
}

// chainedUnits says why a chain of limiters metering different units
// bounds none of its earlier rules.
const chainedUnits = "chained limiters of different units: a later limiter holds calls back by their cost in its unit and lets them go together, so nothing bounds the earlier rules' windows"

// mixedAfter reports whether a limiter after rule i's in the chain (pos:
// each rule's place in it) meters another unit: it delays each call by its
// own cost, not as a shaper of rule i's unit, so rule i's bound no longer
// holds for the sends.
func mixedAfter(rules []rule.Rule, pos []int, i int) bool {
	for k, r := range rules {
		if pos[k] > pos[i] && r.Unit != rules[i].Unit {
			return true
		}
	}
	return false
}

// askPositions is each of n rules' place in the chain cfg asks them in.
func askPositions(cfg catalog.LibConfig, n int) []int {
	pos := make([]int, n)
	for p, i := range cfg.AskOrder(n) {
		pos[i] = p
	}
	return pos
}

// logPieces are design d's sliding logs with cfg of the rules metering
// unit.
func logPieces(d design, cfg catalog.LibConfig, rules []rule.Rule, unit string) []logPiece {
	var out []logPiece
	for i, r := range rules {
		if r.Unit == unit {
			out = append(out, logPiece{n: int64(limiterAt(d, cfg, i, r).Limit), per: r.Window + cfg.Margin, rule: i})
		}
	}
	return out
}

// analysis is a design's limiters and slacks.
type analysis struct {
	curves  []curve
	chained bool          // the limiters are asked in turn, in rule order
	passes  bool          // a chained limiter passes calls on as its tokens come
	send    time.Duration // from the last decision to the send
	step    time.Duration // added by each later limiter of a chain
	logs    bool          // sliding logs that judge each call together (logsWorst)
	// firstHit: fixed windows open at the first call after the previous
	// one closed, and a refused caller asks again every W/N.
	firstHit bool
	windows  []windowLimiter // chained fixed windows, in the order asked
	why      string          // when curves is nil
}

// windowChain is design d's fixed-window limiters with cfg in the order
// asked: a caller refused waits for the next window (aligned windows) or
// asks again every W/N (firstHit), and wakes up to a step late.
func windowChain(d design, cfg catalog.LibConfig, rules []rule.Rule, a *analysis) []windowLimiter {
	var out []windowLimiter
	for _, i := range cfg.AskOrder(len(rules)) {
		r := rules[i]
		retry := a.step
		if a.firstHit {
			retry += r.Window / time.Duration(r.Limit)
		}
		out = append(out, windowLimiter{n: int64(limiterAt(d, cfg, i, r).Limit), per: r.Window + cfg.Margin, retry: retry})
	}
	return out
}

// truncated is mk on throttled's spacing: PerDuration truncates per/N to
// whole nanoseconds, so N calls take N·⌊per/N⌋.
func truncated(mk limiterCurve) limiterCurve {
	return func(b, n int64, per time.Duration) curve {
		return mk(b, n, time.Duration(n)*(per/time.Duration(n)))
	}
}

// curves builds one limiter per rule with mk, from each rule's burst and
// enforced limit (limiterAt) and its widened window.
func curves(d design, cfg catalog.LibConfig, rules []rule.Rule, mk limiterCurve) []curve {
	out := make([]curve, len(rules))
	for i, r := range rules {
		l := limiterAt(d, cfg, i, r)
		out[i] = mk(int64(l.Burst), int64(l.Limit), r.Window+cfg.Margin)
	}
	return out
}

// limiterAt is rule i's limiter in design d with cfg: its burst (for
// the buckets) and the calls or units it lets through per window plus
// margin: ⌊N/2⌋ with Half for the window designs, a rule's own burst and
// rate where the design takes them (PerRule).
func limiterAt(d design, cfg catalog.LibConfig, i int, r rule.Rule) libs.RuleLimit {
	tune := d.Tuning()
	if !tune.perRule {
		i = -1
	}
	l := cfg.RuleLimitAt(i, r)
	if tune.family == designWindows || tune.family == designLogs {
		l.Limit = cfg.LimitFor(r.Limit)
	}
	return l
}

// sendDelay is the longest a send lags the decision that admitted it under
// opt's runtime: the latest wake-up and the op costs of the steps after
// the decision (one per rule and two more); -1 when either is unbounded.
func sendDelay(opt *Options) time.Duration {
	_, opHi, okOp := opt.OpCost.Bounds()
	_, lateHi, okLate := opt.Lateness.Bounds()
	if !okOp || !okLate {
		return -1
	}
	return time.Duration(len(opt.Rules)+2)*opHi + lateHi
}

func skewSpread(s []time.Duration) time.Duration {
	if len(s) == 0 {
		return 0
	}
	lo, hi := s[0], s[0]
	for _, d := range s {
		lo, hi = min(lo, d), max(hi, d)
	}
	return hi - lo
}

// paceOf is the setting's sustained spacing: one call every paceOf at most, in
// the long run, for the rule whose limiter is slowest (rounded up, so calls
// that arrive at this pace never outrun the limiter).
func paceOf(d design, cfg catalog.LibConfig, rules []rule.Rule) time.Duration {
	var pace time.Duration
	for i, r := range rules {
		n := limiterAt(d, cfg, i, r).Limit
		per := r.Window + cfg.Margin
		pace = max(pace, (per+time.Duration(n)-1)/time.Duration(n))
	}
	return pace
}

// analyticSafe reports whether every bound is known and within its limit.
func analyticSafe(bs []Bound) bool {
	for _, b := range bs {
		if b.Worst == Unbounded || b.Worst > int64(b.Rule.Limit) {
			return false
		}
	}
	return true
}

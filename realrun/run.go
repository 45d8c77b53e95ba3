package realrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
	"github.com/rlcheck/rlcheck/workload"
)

// Options tune Run.
type Options struct {
	// Strategies limits the run to these names (nil: the scenario's list).
	Strategies []string
	// Redis is the store of distributed strategies; nil starts an
	// in-process miniredis for each strategy that needs one.
	Redis redis.Scripter
	// Run numbers this run among repeats; it keeps shared Redis keys apart.
	Run int
	// WallEpoch hands strategies Unix nanoseconds instead of instants
	// counted from the run's start. The simulator starts every run at
	// instant 0, which lies on a boundary of every window; on the wall
	// clock a run starts at an arbitrary phase of each window, which
	// matters to designs with fixed windows (combined-counter).
	WallEpoch bool
	// Margin widens every window the limiters enforce, while the checker
	// judges the sends by the scenario's own rules: room for the jitter
	// between a limiter's record and the caller's send. Zero takes the
	// scenario's.
	Margin time.Duration
}

// Scenario returns s as the limiters of a run with o see it (the margin
// applied). Run and Repeat's prediction both start from it, so that the
// prediction runs the limiters the real run runs.
func (o Options) Scenario(s *workload.Scenario) *workload.Scenario {
	c := *s
	c.Margin = cmp.Or(o.Margin, s.Margin)
	return &c
}

// Prediction returns the simulator's options for the prediction of runs
// with o: every option the two share, by name (TestPredictionTakesEveryOption).
func (o Options) Prediction() PredictOptions {
	return PredictOptions{Strategies: o.Strategies, Redis: o.Redis}
}

// Result is one real-clock run of a scenario, every strategy at once.
type Result struct {
	Scenario   string
	Rules      []rule.Rule // as run, after any Scale
	Wall       time.Duration
	Strategies []StrategyResult
}

// StrategyResult is what one strategy did on the real clock. Violations
// and windows come from the checker.
type StrategyResult struct {
	Name      string
	CheckAll  bool // the strategy must never violate (see catalog.Strategy)
	Calls     int
	Cancelled int // callers whose timeout ended their wait
	// Refused counts the callers refused at once: a cost above a rule's
	// limit (strategies.CostError).
	Refused int
	// SendCosts are each send's costs, one per unit the rules meter, in
	// the order of Sends; nil when they meter none.
	SendCosts []int64
	// SendActuals and SendSettled are, for a scenario that settles its
	// calls, each send's actual costs (laid out as SendCosts) and the
	// measured instant its answer came back, where the provider settled it.
	SendActuals, SendSettled []int64
	// Sends are the measured send instants, nanoseconds from the run's
	// start, in time order: the moment each caller got back from Acquire,
	// plus the scenario's send delay, spent in a real sleep (the arrival
	// at the provider).
	Sends []int64
	// Duration is from the first send to the last.
	Duration    time.Duration
	MaxInFlight int
	MaxSlots    int // the cap, for strategies that keep one; 0 otherwise
	Rules       []RuleResult
	// RecordViolations are each rule's violations among the instants the
	// limiter itself recorded (nil when it cannot say): zero there and
	// violations among the sends put the fault between record and send.
	RecordViolations []int64
	// SendGap is, for limiters that return their record instant (redis),
	// the time from each call's record to the caller's getting the answer.
	SendGap []time.Duration
	// Late holds the overshoot of every completed sleep inside the
	// strategy: how late real timers woke it.
	Late []time.Duration
	// SendDelays are, per send, the measured time from Acquire returning
	// to the arrival: the scenario's send delay as the real clock slept it.
	SendDelays []time.Duration
}

// RuleResult is one rule's verdict on the measured sends.
type RuleResult struct {
	Rule        rule.Rule
	Violations  int64
	MaxInWindow int64
	// Shortfall is, over the violations, the most by which the window
	// holding one send too many was shorter than the rule's: how far a
	// send would have had to move to keep the rule.
	Shortfall time.Duration
}

// Violations sums the violations over every rule.
func (r *StrategyResult) Violations() int64 {
	var n int64
	for _, rr := range r.Rules {
		n += rr.Violations
	}
	return n
}

// Run runs every strategy of s at the same time on the wall clock, taking
// arrivals and call durations from s.Seed, and checks each one's sends.
// It lasts as long as the scenario does in real time.
func Run(ctx context.Context, s *workload.Scenario, opt Options) (*Result, error) {
	s = opt.Scenario(s)
	if err := catalog.Validate(s); err != nil {
		return nil, err
	}
	names := opt.Strategies
	if names == nil {
		names = s.Strategies
	}
	sts := make([]catalog.Strategy, len(names))
	for i, name := range names {
		st, ok := catalog.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("realrun: unknown strategy %q", name)
		}
		if st.NeedsSlots && s.MaxInFlight < 1 {
			return nil, fmt.Errorf("realrun: strategy %s needs max_in_flight", name)
		}
		sts[i] = st
	}
	times := s.ArrivalTimes(s.Seed)
	calls := callDurations(s, s.Seed, len(times))
	delays := sendDelays(s, s.Seed, len(times))
	costs := s.DrawCosts(s.Seed, len(times))
	draws := callerDraws{costs: costs, actual: s.DrawActuals(s.Seed, len(times))}
	res := &Result{Scenario: s.Name, Rules: s.Rules, Strategies: make([]StrategyResult, len(sts))}
	errs := make([]error, len(sts))
	var wg sync.WaitGroup
	start := time.Now()
	for i, st := range sts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Strategies[i], errs[i] = runStrategy(ctx, s, st, times, calls, delays, draws, opt)
		}()
	}
	wg.Wait()
	res.Wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}

// workerSkew is worker w's clock offset in nanoseconds.
func workerSkew(s *workload.Scenario, w int) int64 {
	if w < len(s.Skew) {
		return int64(s.Skew[w])
	}
	return 0
}

// runStrategy drives one strategy: a goroutine per caller, started at its
// arrival instant.
func runStrategy(ctx context.Context, s *workload.Scenario, st catalog.Strategy, times []int64, calls, delays []time.Duration, draws callerDraws, opt Options) (StrategyResult, error) {
	rt := clock.NewReal()
	late := &lateLog{}
	r := &realRun{ctx: ctx, s: s, rt: rt, t0: rt.Now(), calls: calls, delays: delays, costs: draws.costs, actual: draws.actual, settles: st.Settles}
	r.epoch = r.t0
	if opt.WallEpoch {
		r.epoch = 0
	}
	shared := &catalog.Shared{
		Key:   fmt.Sprintf("rlcheck:real:%s:%s:%d:%d", s.Name, st.Name, s.Seed, opt.Run),
		Redis: opt.Redis,
		Now:   func() int64 { return rt.Now() - r.epoch },
	}
	if st.NeedsRedis && shared.Redis == nil {
		emb, err := embedded.Start()
		if err != nil {
			return StrategyResult{}, fmt.Errorf("realrun: strategy %s: %w", st.Name, err)
		}
		defer emb.Close()
		shared.Redis = emb
	}
	r.res = StrategyResult{Name: st.Name, CheckAll: st.CheckAll, Calls: len(times)}
	var err error
	r.limiters, err = catalog.Limiters(s, st, shared, func(w int) clock.Runtime {
		return &meter{rt: rt, skew: workerSkew(s, w) - r.epoch, late: late}
	})
	defer catalog.CloseLimiters(r.limiters)
	if err != nil {
		return StrategyResult{}, fmt.Errorf("realrun: strategy %s: %w", st.Name, err)
	}
	r.record(st.PerWorker, len(times))
	if st.NeedsSlots {
		r.res.MaxSlots = s.MaxInFlight
	}
	r.res.Sends = make([]int64, 0, len(times))
	var wg sync.WaitGroup
	for i, at := range times {
		if d := time.Duration(r.t0 + at - rt.Now()); d > 0 {
			if err := rt.Sleep(ctx, d); err != nil {
				break
			}
		}
		wg.Go(func() { r.call(i) })
	}
	wg.Wait()
	if r.failure == nil {
		r.failure = ctx.Err()
	}
	if r.failure != nil {
		return StrategyResult{}, fmt.Errorf("realrun: strategy %s: %w", st.Name, r.failure)
	}
	r.res.Late = late.snapshot()
	return r.finish()
}

// realRun is one strategy's run on the wall clock: its limiters and what
// its callers record.
type realRun struct {
	ctx       context.Context
	s         *workload.Scenario
	rt        *clock.Real
	t0, epoch int64
	limiters  []strategies.Limiter
	recs      *records
	// admitted: the records are when Acquire returned, the limiters
	// telling none of their own.
	admitted      bool
	calls, delays []time.Duration
	costs         []int64 // caller i's costs at i*len(s.Costs); nil without cost rules
	actual        []int64 // caller i's actual costs, as costs; nil unless the scenario settles
	settles       bool    // the strategy reserves and settles (catalog.Strategy.Settles)

	mu       sync.Mutex // guards the fields below
	res      StrategyResult
	inFlight int
	failure  error
}

// record readies the record instants: those the limiters tell, or, with a
// send path, when Acquire returned.
func (r *realRun) record(perWorker bool, calls int) {
	// Room for every call up front, so that no append in the admission
	// path allocates (and so invites a collection) between a record and
	// the send it precedes.
	r.recs = &records{at: make([]int64, 0, calls)}
	withAt := false // a limiter that returns its record instant
	for w, lim := range r.limiters {
		if !perWorker && w > 0 {
			break // the one limiter of worker 0
		}
		if a, ok := lim.(admitter); ok {
			skew := workerSkew(r.s, w)
			a.OnAdmit(func(at int64) { r.recs.add(at-skew+r.epoch-r.t0, nil) })
			r.recs.on = true
		}
		if _, ok := lim.(acquirerAt); ok {
			r.recs.on, withAt = true, true
			r.res.SendGap = make([]time.Duration, 0, calls)
		}
	}
	r.admitted = !r.recs.on && r.s.HasSendPath()
	r.recs.on = r.recs.on || r.admitted
	if r.settles {
		// A reservation tells its instant, but the records' verdict would
		// leave its settlement out: the sends' verdict is the one.
		r.recs.on, r.admitted, withAt = false, false, false
		r.res.SendGap = nil
	}
	if r.costs != nil && !withAt {
		// The instants OnAdmit tells carry no costs: the verdict on costs
		// is the sends'. A limiter that returns its record instant (redis)
		// is called with the costs, which its records then carry.
		r.recs.on, r.admitted = false, false
	}
}

// acquire is lim.Acquire for caller i, with its costs when the rules meter
// any (a CostLimiter: catalog.Validate refuses the others); it returns
// them.
func (r *realRun) acquire(ctx context.Context, lim strategies.Limiter, i int) ([]int64, error) {
	if r.costs == nil {
		return nil, lim.Acquire(ctx)
	}
	n := len(r.s.Costs)
	costs := r.costs[i*n : (i+1)*n]
	cl, ok := lim.(strategies.CostLimiter)
	if !ok {
		return nil, fmt.Errorf("its limiter meters calls only; the rules meter %v", r.s.Units())
	}
	return costs, cl.AcquireCost(ctx, costs)
}

// call is caller i: it acquires from its worker's limiter, sends, stays in
// flight for its call and releases.
func (r *realRun) call(i int) {
	lim := r.limiters[i%r.s.Workers]
	cctx := r.ctx
	if r.s.Timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(r.ctx, r.s.Timeout)
		defer cancel()
	}
	var (
		err   error
		at    int64
		costs []int64
		res   *strategies.Reservation
	)
	a, withAt := lim.(acquirerAt)
	rv, reserves := lim.(strategies.Reserver)
	switch {
	case reserves && r.settles:
		withAt = false
		costs, res, err = r.reserve(cctx, rv, i)
	case withAt:
		at, costs, err = r.acquireAt(cctx, a, i)
	default:
		costs, err = r.acquire(cctx, lim, i)
	}
	now := r.rt.Now() // the send, as soon as the caller may make it
	back := now
	if err == nil && r.admitted {
		r.recs.add(now-r.t0, nil)
	}
	if err == nil && r.delays[i] > 0 {
		time.Sleep(r.delays[i]) // on the way to the provider
		now = r.rt.Now()
	}
	if err != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		var ce *strategies.CostError
		switch {
		case errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil:
			r.res.Cancelled++
		case errors.As(err, &ce) && ce.Msg == "":
			r.res.Refused++
		case r.failure == nil:
			r.failure = err
		}
		return
	}
	r.mu.Lock()
	r.res.Sends = append(r.res.Sends, now-r.t0)
	r.res.SendCosts = append(r.res.SendCosts, costs...)
	r.res.SendDelays = append(r.res.SendDelays, time.Duration(now-back))
	sent := len(r.res.Sends) - 1
	if withAt {
		r.recs.add(at+r.epoch-r.t0, costs)
		r.res.SendGap = append(r.res.SendGap, time.Duration(back-r.epoch-at))
	}
	r.inFlight++
	r.res.MaxInFlight = max(r.res.MaxInFlight, r.inFlight)
	r.mu.Unlock()
	if d := r.calls[i]; d > 0 {
		time.Sleep(d)
	}
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	r.settle(lim, res, i, sent)
}

// callerDraws are each caller's costs, and actual costs when the scenario
// settles its calls.
type callerDraws struct{ costs, actual []int64 }

// reserve is acquire for a strategy that settles: it reserves caller i's
// costs.
func (r *realRun) reserve(ctx context.Context, rv strategies.Reserver, i int) ([]int64, *strategies.Reservation, error) {
	var costs []int64
	if r.costs != nil {
		n := len(r.s.Costs)
		costs = r.costs[i*n : (i+1)*n]
	}
	res, err := rv.Reserve(ctx, costs)
	return costs, res, err
}

// settle ends caller i's call, send number sent: the provider settles it
// to its actual costs now, when the scenario settles its calls; the
// limiter's reservation is settled to them, or its slot released.
func (r *realRun) settle(lim strategies.Limiter, res *strategies.Reservation, i, sent int) {
	var actual []int64
	if r.actual != nil {
		n := len(r.s.Actual)
		actual = r.actual[i*n : (i+1)*n]
		r.mu.Lock()
		if r.res.SendSettled == nil {
			r.res.SendSettled = make([]int64, 0, len(r.calls))
		}
		for len(r.res.SendSettled) <= sent {
			r.res.SendSettled = append(r.res.SendSettled, -1)
			r.res.SendActuals = append(r.res.SendActuals, make([]int64, n)...)
		}
		r.res.SendSettled[sent] = r.rt.Now() - r.t0
		copy(r.res.SendActuals[sent*n:], actual)
		r.mu.Unlock()
	}
	if res == nil {
		lim.Release()
		return
	}
	if err := res.Settle(actual); err != nil {
		r.mu.Lock()
		if r.failure == nil {
			r.failure = err
		}
		r.mu.Unlock()
	}
}

// finish judges the sends and the records of a run that ended.
func (r *realRun) finish() (StrategyResult, error) {
	res, s := r.res, r.s
	if s.Reserved() {
		for len(res.SendSettled) < len(res.Sends) { // sends whose call never ended: never settled
			res.SendSettled = append(res.SendSettled, -1)
			res.SendActuals = append(res.SendActuals, make([]int64, len(s.Actual))...)
		}
	}
	sortCosted(res.Sends, len(s.Costs), res.SendCosts, res.SendActuals, res.SendSettled)
	rules, first, last, err := judgeReserved(res.Sends, res, s)
	res.Rules = rules
	if err != nil {
		return StrategyResult{}, err
	}
	res.Duration = time.Duration(last - first)
	if r.recs.on {
		at, costs := r.recs.sorted(len(s.Costs))
		recRules, _, _, err := judgeCosts(at, costs, s.Units(), s.Rules, s.Boundary)
		if err != nil {
			return StrategyResult{}, err
		}
		res.RecordViolations = make([]int64, len(recRules))
		for i, rr := range recRules {
			res.RecordViolations[i] = rr.Violations
		}
	}
	return res, nil
}

// sortCosted sorts sends in time order, each with its nu costs, and with
// its nu actual costs and its settlement when they are not nil.
func sortCosted(sends []int64, nu int, costs, actual, settled []int64) {
	if nu == 0 {
		slices.Sort(sends)
		return
	}
	idx := make([]int, len(sends))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(sends[a], sends[b]) })
	ts, cs, as, us := slices.Clone(sends), slices.Clone(costs), slices.Clone(actual), slices.Clone(settled)
	for i, j := range idx {
		sends[i] = ts[j]
		copy(costs[i*nu:(i+1)*nu], cs[j*nu:(j+1)*nu])
		if settled != nil {
			settled[i] = us[j]
			copy(actual[i*nu:(i+1)*nu], as[j*nu:(j+1)*nu])
		}
	}
}

// judgeReserved is judgeCosts for the sends of res, settled as the
// provider settled them when the scenario settles its calls.
func judgeReserved(sends []int64, res StrategyResult, s *workload.Scenario) ([]RuleResult, int64, int64, error) {
	if !s.Reserved() {
		return judgeCosts(sends, res.SendCosts, s.Units(), s.Rules, s.Boundary)
	}
	return judgeWith(s.Rules, func(cfg checker.Config) (checker.Report, error) {
		cfg.Boundary, cfg.Units = s.Boundary, s.Units()
		return checker.CheckReserved(sends, res.SendCosts, res.SendActuals, res.SendSettled, cfg)
	})
}

// judge checks sends (in time order) against rules, and returns each
// rule's verdict with the instants of the first and last send.
func judge(sends []int64, rules []rule.Rule, b rule.Boundary) ([]RuleResult, int64, int64, error) {
	return judgeCosts(sends, nil, nil, rules, b)
}

// judgeCosts is judge for sends whose costs (len(units) a send) the rules
// meter.
func judgeCosts(sends, costs []int64, units []string, rules []rule.Rule, b rule.Boundary) ([]RuleResult, int64, int64, error) {
	return judgeWith(rules, func(cfg checker.Config) (checker.Report, error) {
		cfg.Boundary, cfg.Units = b, units
		return checker.CheckCosts(sends, costs, cfg)
	})
}

// judgeWith runs check with a configuration of rules that notes each
// violation's shortfall, and returns each rule's verdict with the
// instants of the first and last send.
func judgeWith(rules []rule.Rule, check func(checker.Config) (checker.Report, error)) ([]RuleResult, int64, int64, error) {
	out := make([]RuleResult, len(rules))
	cfg := checker.Config{Rules: rules,
		OnViolation: func(i int, v checker.Violation) {
			out[i].Shortfall = max(out[i].Shortfall, rules[i].Window-time.Duration(v.Send.At-v.WindowStart.At))
		}}
	rep, err := check(cfg)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("realrun: %w", err)
	}
	for i, rr := range rep.Rules {
		out[i].Rule, out[i].Violations, out[i].MaxInWindow = rules[i], rr.Violations, rr.MaxInWindow
	}
	if rep.Sends == 0 {
		return out, 0, 0, nil
	}
	return out, rep.First, rep.Last, nil
}

// admitter is a limiter that reports the instant it records each call,
// under its own lock (Combined and the gated strategies).
type admitter interface{ OnAdmit(func(at int64)) }

// acquirerAt is a limiter whose Acquire can return the instant it recorded
// (the Redis strategy: the script's clock), with costs too.
type acquirerAt interface {
	AcquireAt(ctx context.Context) (int64, error)
	AcquireCostAt(ctx context.Context, costs []int64) (int64, error)
}

// acquireAt is acquire for a limiter that returns its record instant.
func (r *realRun) acquireAt(ctx context.Context, a acquirerAt, i int) (int64, []int64, error) {
	if r.costs == nil {
		at, err := a.AcquireAt(ctx)
		return at, nil, err
	}
	n := len(r.s.Costs)
	costs := r.costs[i*n : (i+1)*n]
	at, err := a.AcquireCostAt(ctx, costs)
	return at, costs, err
}

// records are the instants a limiter recorded its calls at, in the run's
// time base, with their costs when the rules meter any; on is false for
// limiters that cannot tell.
type records struct {
	mu    sync.Mutex
	at    []int64
	costs []int64
	on    bool
}

func (r *records) add(at int64, costs []int64) {
	r.mu.Lock()
	r.at = append(r.at, at)
	r.costs = append(r.costs, costs...)
	r.mu.Unlock()
}

// sorted returns the records in time order, each with its nu costs.
func (r *records) sorted(nu int) (at, costs []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, costs = slices.Clone(r.at), slices.Clone(r.costs)
	sortCosted(at, nu, costs, nil, nil)
	return at, costs
}

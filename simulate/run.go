package simulate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/clock"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/strategies"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/strategies/redislimit"
	"github.com/rlcheck/rlcheck/strategies/redislimit/embedded"
	"github.com/rlcheck/rlcheck/workload"
)

// Options tune Run beyond the scenario.
type Options struct {
	// Strategies limits the run to these names (nil: the scenario's list).
	Strategies []string
	// Redis is handed to distributed strategies through Env.Shared.
	Redis redis.Scripter
	// Wrap, when set, wraps each worker's runtime view; the conformance
	// suite uses it to watch every sleep.
	Wrap func(clock.Runtime) clock.Runtime
	// Progress, when set, is called by RunSeeds after each run with the
	// runs done so far (each value once, from any goroutine) and the total.
	Progress func(done, total int)
	// Exec, when set, adds a row for every strategy the adapter program
	// offers, after the Go strategies.
	Exec *adapter.Program
}

// Run runs every strategy of s on s.Seed.
func Run(s *workload.Scenario, opt Options) (*Result, error) {
	if err := catalog.Validate(s); err != nil {
		return nil, err
	}
	names := opt.Strategies
	if names == nil {
		names = s.Strategies
	}
	res := &Result{Scenario: s.Name, Seed: s.Seed, Rules: s.Rules, SendPath: s.HasSendPath(), Margin: s.Margin}
	rs, err := rows(names, opt)
	if err != nil {
		return nil, err
	}
	for _, rw := range rs {
		var r StrategyResult
		if rw.prog != nil {
			r, err = runRow(s, rw, s.Seed, opt, nil)
		} else {
			r, err = RunStrategy(s, rw.st, s.Seed, opt)
		}
		if err != nil {
			return nil, err
		}
		res.Strategies = append(res.Strategies, r)
	}
	return res, nil
}

// RunStrategy runs one strategy of s on seed.
// Calls from any number of goroutines may run at once; they reuse the
// coroutines and scheduler of earlier calls (virtual.TakePool).
func RunStrategy(s *workload.Scenario, st catalog.Strategy, seed uint64, opt Options) (StrategyResult, error) {
	pp := virtual.TakePool()
	ended := false
	defer func() {
		if ended {
			virtual.GivePool(pp)
		} else {
			go virtual.CloseAfterPanic(pp) // its callers are in no state to reuse
		}
	}()
	r, err := runStrategy(s, st, seed, opt, pp)
	ended = true
	return r, err
}

// runStrategy is RunStrategy taking its coroutines from pool, and leaving
// them there, when pool is not nil.
func runStrategy(s *workload.Scenario, st catalog.Strategy, seed uint64, opt Options, pool *virtual.Pool) (StrategyResult, error) {
	if st.NeedsSlots && s.MaxInFlight < 1 {
		return StrategyResult{}, fmt.Errorf("simulate: strategy %s needs max_in_flight", st.Name)
	}
	times := s.ArrivalTimes
	if pool != nil {
		times = func(seed uint64) []int64 {
			pool.Times = s.ArrivalTimesInto(pool.Times, seed)
			return pool.Times
		}
	}
	r := &simRun{s: s, sch: newSched(s, seed, pool), path: rand.New(rand.NewPCG(seed, streamPath)),
		sendPath: s.HasSendPath()}
	shared := &catalog.Shared{Key: fmt.Sprintf("rlcheck:%s:%s:%d", s.Name, st.Name, seed), Redis: opt.Redis, Now: r.sch.Now}
	if !s.RedisRTT.IsZero() {
		shared.SimulateRTT(r.sch, s.RedisRTT, r.path)
	}
	pooledRedis, stop, err := runRedis(shared, st, pool)
	if err != nil {
		return StrategyResult{}, fmt.Errorf("simulate: strategy %s: %w", st.Name, err)
	}
	defer stop()
	r.limiters, err = catalog.Limiters(s, st, shared, func(w int) clock.Runtime {
		view := r.sch.View(workerSkew(s, w))
		if opt.Wrap != nil {
			view = opt.Wrap(view)
		}
		return view
	})
	defer catalog.CloseLimiters(r.limiters)
	if err != nil {
		return StrategyResult{}, fmt.Errorf("simulate: strategy %s: %w", st.Name, err)
	}
	arrivals := times(seed)
	r.costs = s.DrawCosts(seed, len(arrivals))
	r.actual = s.DrawActuals(seed, len(arrivals))
	r.settles = st.Settles
	r.start(st.Name, arrivals)
	if pool != nil {
		pool.Run(r.sch)
	} else {
		r.sch.Run()
	}
	if pooledRedis && r.failure == nil {
		// Its keys would otherwise pile up over the pool's runs.
		r.failure = redislimit.Reset(context.Background(), shared.Redis, shared.Key, catalog.LimiterEnv(s, 0, nil, shared).Rules)
	}
	if r.failure != nil {
		return StrategyResult{}, fmt.Errorf("simulate: strategy %s: %w", st.Name, r.failure)
	}
	return r.finish(st.PerWorker)
}

// newSched returns the run's scheduler on seed, from pool when not nil.
func newSched(s *workload.Scenario, seed uint64, pool *virtual.Pool) *virtual.Sched {
	cfg := virtual.Config{
		Lateness: drawer(&s.Lateness),
		OpCost:   drawer(&s.OpCost),
		Rand:     rand.New(rand.NewPCG(seed, streamRuntime)),
	}
	if pool != nil {
		return pool.NewSched(cfg)
	}
	return virtual.NewSched(cfg)
}

// runRedis gives shared the in-process Redis st needs when the caller gave
// none: the pool's, which outlives the run (pooled), or one of the run's
// own, which stop closes.
func runRedis(shared *catalog.Shared, st catalog.Strategy, pool *virtual.Pool) (pooled bool, stop func(), err error) {
	stop = func() {}
	if !st.NeedsRedis || shared.Redis != nil {
		return false, stop, nil
	}
	shared.InProcess = true
	pooled = pool != nil && !pool.Cold()
	if pooled && pool.Resource != nil {
		// Keys name the run, so runs sharing a server never meet.
		shared.Redis = pool.Resource.(redis.Scripter)
		return pooled, stop, nil
	}
	emb, err := embedded.Start()
	if err != nil {
		return false, stop, err
	}
	if pooled {
		pool.Resource = emb
	} else {
		stop = func() { emb.Close() }
	}
	shared.Redis = emb
	return pooled, stop, nil
}

// simRun is one strategy's run on one seed: its scheduler, its limiters
// and what its callers record.
type simRun struct {
	s          *workload.Scenario
	sch        *virtual.Sched
	limiters   []strategies.Limiter
	path       *rand.Rand // send delays and Redis round trips
	sendPath   bool
	costs      []int64 // caller i's costs at i*len(s.Costs); nil without cost rules
	actual     []int64 // caller i's actual costs, as costs; nil unless the scenario settles
	settles    bool    // the strategy reserves the estimates and settles them (catalog.Strategy.Settles)
	admActual  []int64 // each admission's actual costs, beside admCosts
	admSettled []int64 // each admission's settlement, beside admCosts
	admCosts   []int64 // each admission's costs, beside res.Admissions
	res        StrategyResult
	lo, hi     int64 // the least and greatest path delay
	inFlight   int
	failure    error
}

// start readies the result and makes the scheduler start a caller at
// each of times.
func (r *simRun) start(name string, times []int64) {
	r.res = StrategyResult{Name: name, Calls: len(times), Wall: r.s.Arrivals.Wall}
	r.res.Sends = make([]int64, 0, len(times))
	r.res.SendWorkers = make([]int32, 0, len(times))
	if r.sendPath {
		r.res.Admissions = make([]int64, 0, len(times))
	}
	r.sch.Arrivals(times, r.call)
}

// call is caller i: it acquires from its worker's limiter, sends, stays in
// flight for its call and releases.
func (r *simRun) call(i int64) {
	if r.failure != nil {
		return // the run has failed: call nothing more
	}
	s, sch, base := r.s, r.sch, context.Background()
	w := int(i % int64(s.Workers))
	lim := r.limiters[w]
	ctx := base
	if s.Timeout > 0 {
		ctx = virtual.WithDeadline(base, sch.Now()+int64(s.Timeout))
	}
	sch.Unmark()
	costs, res, err := r.acquire(ctx, lim, i)
	if err != nil {
		r.refused(err)
		return
	}
	now := sch.Now()
	var delay time.Duration
	if r.sendPath {
		admitted := now
		if at, ok := r.sch.Marked(); ok {
			admitted = at // the script's instant, before the reply leg
		}
		delay = r.admit(w, admitted, now)
		r.admCosts = append(r.admCosts, costs...)
	}
	r.res.SendCosts = append(r.res.SendCosts, costs...)
	r.res.Sends = append(r.res.Sends, now+int64(delay))
	r.res.SendWorkers = append(r.res.SendWorkers, int32(w))
	r.inFlight++
	r.res.MaxInFlight = max(r.res.MaxInFlight, r.inFlight)
	// The call is in flight on its way to the provider too.
	d := delay + s.CallDuration.Draw(sch.Rand())
	actual := r.settlement(i, now, d)
	if d > 0 {
		_ = sch.Sleep(base, d) // no deadline: cannot fail
	}
	r.inFlight--
	if res == nil {
		lim.Release()
	} else if err := res.Settle(actual); err != nil && r.failure == nil {
		r.failure = err
	}
}

// refused counts a caller the limiter did not admit, or fails the run.
func (r *simRun) refused(err error) {
	var ce *strategies.CostError
	switch {
	case errors.Is(err, virtual.ErrDeadline):
		r.res.Cancelled++
	case errors.As(err, &ce) && ce.Msg == "":
		r.res.Refused++
	case r.failure == nil:
		r.failure = err
	}
}

// settlement records, for a scenario that settles its calls, caller i's
// actual costs and the provider's settlement when the call ends d after
// now, and returns the actual costs; nil otherwise.
func (r *simRun) settlement(i, now int64, d time.Duration) []int64 {
	if r.actual == nil {
		return nil
	}
	n := int64(len(r.s.Actual))
	actual := r.actual[i*n : (i+1)*n]
	r.res.SendActuals = append(r.res.SendActuals, actual...)
	r.res.SendSettled = append(r.res.SendSettled, now+int64(d))
	if r.sendPath {
		r.admActual = append(r.admActual, actual...)
		r.admSettled = append(r.admSettled, now+int64(d))
	}
	return actual
}

// acquire is lim.Acquire for caller i, with its costs when the rules
// meter any (a CostLimiter: catalog.Validate refuses the others); it
// returns them, and the reservation to settle when the strategy settles.
func (r *simRun) acquire(ctx context.Context, lim strategies.Limiter, i int64) ([]int64, *strategies.Reservation, error) {
	var costs []int64
	if r.costs != nil {
		n := int64(len(r.s.Costs))
		costs = r.costs[i*n : (i+1)*n]
	}
	if rv, ok := lim.(strategies.Reserver); ok && r.settles {
		res, err := rv.Reserve(ctx, costs)
		return costs, res, err
	}
	if r.costs == nil {
		return nil, nil, lim.Acquire(ctx)
	}
	cl, ok := lim.(strategies.CostLimiter)
	if !ok {
		return nil, nil, fmt.Errorf("its limiter meters calls only; the rules meter %v", r.s.Units())
	}
	return costs, nil, cl.AcquireCost(ctx, costs)
}

// admit records the admission at admitted of worker w's caller, whose
// Acquire returned at now, and returns its drawn send delay.
func (r *simRun) admit(w int, admitted, now int64) time.Duration {
	r.res.Admissions = append(r.res.Admissions, admitted)
	delay := r.s.SendDelayFor(w).Draw(r.path)
	d := now + int64(delay) - admitted
	if len(r.res.Admissions) == 1 {
		r.lo, r.hi = d, d
	}
	r.lo, r.hi = min(r.lo, d), max(r.hi, d)
	return delay
}

// finish judges the run's sends.
func (r *simRun) finish(perWorker bool) (StrategyResult, error) {
	res := r.res
	if r.sch != nil {
		res.Sched = r.sch.Stats()
	}
	admCosts := r.admCosts
	if r.sendPath {
		admCosts = r.sortSends(&res, admCosts, len(r.s.Costs))
		res.AdmissionCosts = admCosts
		res.PathSpread = time.Duration(r.hi - r.lo)
	}
	if err := judge(&res, sendBook{admCosts, r.admActual, r.admSettled}, r.s, r.limiters, perWorker); err != nil {
		return StrategyResult{}, err
	}
	return res, nil
}

// Independent PCG streams of one seed, beside workload.StreamArrivals.
const (
	streamRuntime = 0x72756e74 // "runt"
	streamPath    = 0x70617468 // "path": send delays and Redis round trips
)

// drawer is d for the scheduler: nil when every draw is zero and takes
// nothing from the random source.
func drawer(d *workload.Dist) virtual.Drawer {
	if d.Kind == workload.Fixed && d.A == 0 {
		return nil
	}
	return d
}

func workerSkew(s *workload.Scenario, w int) time.Duration {
	if w < len(s.Skew) {
		return s.Skew[w]
	}
	return 0
}

// sortSends puts the arrivals at the provider in time order (equal
// instants in the order their callers were admitted), each with its
// worker and its nu costs, and the admissions in time order; it returns
// the admissions' costs (admCosts, nu a call) in their new order; the
// settlements of the sends and of r's admissions follow their calls.
func (r *simRun) sortSends(res *StrategyResult, admCosts []int64, nu int) []int64 {
	idx := stableOrder(res.Sends)
	sends := make([]int64, len(idx))
	workers := make([]int32, len(idx))
	for i, j := range idx {
		sends[i], workers[i] = res.Sends[j], res.SendWorkers[j]
	}
	res.Sends, res.SendWorkers = sends, workers
	res.SendCosts = permuteCosts(res.SendCosts, idx, nu)
	if res.SendSettled != nil {
		res.SendActuals = permuteCosts(res.SendActuals, idx, nu)
		res.SendSettled = permuteCosts(res.SendSettled, idx, 1)
	}
	if nu == 0 {
		slices.Sort(res.Admissions)
		return nil
	}
	idx = stableOrder(res.Admissions)
	adm := make([]int64, len(idx))
	for i, j := range idx {
		adm[i] = res.Admissions[j]
	}
	res.Admissions = adm
	if r.admSettled != nil {
		r.admActual = permuteCosts(r.admActual, idx, nu)
		r.admSettled = permuteCosts(r.admSettled, idx, 1)
	}
	return permuteCosts(admCosts, idx, nu)
}

// stableOrder returns the indices of times in time order, ties in index
// order.
func stableOrder(times []int64) []int32 {
	idx := make([]int32, len(times))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(times[a], times[b]) })
	return idx
}

// permuteCosts returns costs (nu a call) with call idx[i] at place i.
func permuteCosts(costs []int64, idx []int32, nu int) []int64 {
	if nu == 0 {
		return costs
	}
	out := make([]int64, len(costs))
	for i, j := range idx {
		copy(out[i*nu:(i+1)*nu], costs[int(j)*nu:(int(j)+1)*nu])
	}
	return out
}

// checkCosted is checker.CheckCosts with the scenario's units; with
// settlements (settled not nil), checker.CheckReserved.
func checkCosted(times, costs, actual, settled []int64, units []string, cfg checker.Config) (checker.Report, error) {
	cfg.Units = units
	if settled == nil {
		return checker.CheckCosts(times, costs, cfg)
	}
	return checker.CheckReserved(times, costs, actual, settled, cfg)
}

// sendBook is what the checker needs of each send beside its instant: its
// costs (estimates), and its actual costs and settlement when settled.
type sendBook struct{ costs, actual, settled []int64 }

// judge hands the arrivals at the provider, and the admissions (adm) when
// they differ, to the checker, and adds the limiters' own stats.
func judge(res *StrategyResult, adm sendBook, s *workload.Scenario, limiters []strategies.Limiter, perWorker bool) error {
	res.Rules = make([]RuleResult, len(s.Rules))
	for i, r := range s.Rules {
		res.Rules[i] = RuleResult{Rule: r, Records: -1, Leaked: -1, FirstBound: -1}
	}
	if res.Admissions != nil {
		rep, err := checkCosted(res.Admissions, adm.costs, adm.actual, adm.settled, s.Units(), checker.Config{Rules: s.Rules, Boundary: s.Boundary})
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		for i, rr := range rep.Rules {
			res.Rules[i].RecordViolations = rr.Violations
		}
	}
	rep, err := checkCosted(res.Sends, res.SendCosts, res.SendActuals, res.SendSettled, s.Units(), checker.Config{
		Rules:    s.Rules,
		Boundary: s.Boundary,
		OnViolation: func(i int, v checker.Violation) {
			res.Rules[i].ViolationAt = append(res.Rules[i].ViolationAt, v.Send.At)
		},
	})
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if rep.Sends > 0 {
		res.Duration = time.Duration(rep.Last - rep.First)
	}
	for i, rr := range rep.Rules {
		res.Rules[i].Violations = rr.Violations
		res.Rules[i].MaxInWindow = rr.MaxInWindow
		if res.Admissions == nil {
			res.Rules[i].RecordViolations = rr.Violations // the same instants
		}
	}
	n := min(1, len(limiters))
	if perWorker {
		n = len(limiters)
	}
	for _, lim := range limiters[:n] {
		sr, ok := lim.(strategies.StatsReporter)
		if !ok {
			return nil
		}
		st := sr.Stats()
		for i := range res.Rules {
			rr := &res.Rules[i]
			if rr.Records < 0 {
				rr.Records = 0
			}
			rr.Records += st.Records[i]
			rr.Waited += st.Waited[i]
			if fb := st.FirstBound[i]; fb >= 0 && (rr.FirstBound < 0 || fb < rr.FirstBound) {
				rr.FirstBound = fb
			}
		}
	}
	for i := range res.Rules {
		if res.Rules[i].Records >= 0 {
			res.Rules[i].Leaked = res.Rules[i].Records - int64(len(res.Sends))
		}
	}
	return nil
}

// RunSeeds repeats every strategy of s over seeds s.Seed .. s.Seed+n-1,
// spreading runs over the machine's cores; results do not depend on how.
func RunSeeds(s *workload.Scenario, n int, opt Options) (*RunsResult, error) {
	if err := catalog.Validate(s); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("simulate: runs must be at least 1")
	}
	names := opt.Strategies
	if names == nil {
		names = s.Strategies
	}
	out := &RunsResult{Scenario: s.Name, Seed: s.Seed, Runs: n, Rules: s.Rules, SendPath: s.HasSendPath(), Margin: s.Margin}
	sts, err := rows(names, opt)
	if err != nil {
		return nil, err
	}
	for i, rw := range sts {
		out.Strategies = append(out.Strategies, StrategyRuns{Name: rw.st.Name, Rules: make([]RuleRuns, len(s.Rules))})
		for k, r := range s.Rules {
			out.Strategies[i].Rules[k] = RuleRuns{Rule: r, PerRun: make([]int64, n)}
		}
	}
	sums, err := runJobs(s, sts, n, opt, out)
	if err != nil {
		return nil, err
	}
	tally(out, sums, n)
	return out, nil
}

// runSummary is what RunSeeds keeps of one run (job).
type runSummary struct {
	viol       []int64 // per rule
	recViol    bool
	dur, sends int64
	spread     time.Duration
	err        error
}

// runJobs runs strategy j/n of sts on seed s.Seed+j%n for every job j,
// the first run of each strategy into out. Workers take jobs by an atomic
// counter and write each job's summary to its own slot, so that none
// waits on another; tally adds them up in job order.
func runJobs(s *workload.Scenario, sts []row, n int, opt Options, out *RunsResult) ([]runSummary, error) {
	jobs := len(sts) * n
	sums := make([]runSummary, jobs)
	viol := make([]int64, jobs*len(s.Rules))
	var (
		next, done atomic.Int64
		wg         sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), jobs) {
		wg.Go(func() {
			var pool virtual.Pool
			defer pool.Close()
			for {
				j := int(next.Add(1) - 1)
				if j >= jobs {
					return
				}
				si, run := j/n, j%n
				r, err := runRow(s, sts[si], s.Seed+uint64(run), opt, &pool)
				if opt.Progress != nil {
					opt.Progress(int(done.Add(1)), jobs)
				}
				sum := &sums[j]
				if err != nil {
					sum.err = err
					next.Store(int64(jobs)) // stop the others early
					continue
				}
				sum.viol = viol[j*len(s.Rules) : (j+1)*len(s.Rules)]
				for k := range r.Rules {
					sum.viol[k] = r.Rules[k].Violations
				}
				sum.recViol = r.RecordViolations() > 0
				sum.dur, sum.sends, sum.spread = int64(r.Duration), int64(len(r.Sends)), r.PathSpread
				if run == 0 {
					out.Strategies[si].First = r
				}
			}
		})
	}
	wg.Wait()
	for j := range sums {
		if err := sums[j].err; err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// tally adds the summaries of n runs a strategy up into out.
func tally(out *RunsResult, sums []runSummary, n int) {
	durations := make([][2]int64, len(out.Strategies)) // per strategy: sum of durations, of sends
	admViolated := make([]int, len(out.Strategies))
	for j := range sums {
		sum := &sums[j]
		if sum.viol == nil {
			continue // not run: an earlier job failed
		}
		si, run := j/n, j%n
		sr := &out.Strategies[si]
		for k, v := range sum.viol {
			sr.Rules[k].PerRun[run] = v
		}
		if sum.recViol {
			admViolated[si]++
		}
		durations[si][0] += sum.dur
		durations[si][1] += sum.sends
		sr.PathSpread = max(sr.PathSpread, sum.spread)
	}
	for si := range out.Strategies {
		sr := &out.Strategies[si]
		sr.RunsWithRecordViolations = admViolated[si]
		sr.MeanDuration = time.Duration(durations[si][0] / int64(n))
		sr.MeanSends = float64(durations[si][1]) / float64(n)
		for run := range n {
			for k := range sr.Rules {
				if sr.Rules[k].PerRun[run] > 0 {
					sr.RunsWithViolations++
					break
				}
			}
		}
		for k := range sr.Rules {
			summarize(&sr.Rules[k])
		}
	}
}

// summarize fills the mean and the nearest-rank percentiles.
func summarize(r *RuleRuns) {
	v := append([]int64(nil), r.PerRun...)
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	var sum int64
	for _, x := range v {
		sum += x
	}
	r.Mean = float64(sum) / float64(len(v))
	r.P50 = rank(v, 50)
	r.P95 = rank(v, 95)
	r.Max = v[len(v)-1]
}

func rank(sorted []int64, p int) int64 {
	i := (p*len(sorted) + 99) / 100 // ceil(p/100*n)
	if i < 1 {
		i = 1
	}
	return sorted[i-1]
}

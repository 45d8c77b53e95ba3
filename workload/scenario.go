package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
)

// ArrivalKind says how callers arrive.
type ArrivalKind string

// The arrival patterns.
const (
	AllAtOnce ArrivalKind = "all-at-once" // every caller at Start
	Interval  ArrivalKind = "interval"    // one caller every Every from Start
	Poisson   ArrivalKind = "poisson"     // a Poisson process of Rate per second from Start
	Replay    ArrivalKind = "replay"      // the instants in Times
)

// Arrivals describes when callers arrive.
type Arrivals struct {
	Kind  ArrivalKind
	Start time.Duration
	// Wall says Start was given as a wall-clock instant (its time since
	// the Unix epoch, which is simulated time 0): reports then give the
	// run's instants as times of day.
	Wall  bool
	Every time.Duration // Interval
	Rate  float64       // Poisson, callers per second
	// Times are the replayed instants, in non-decreasing order (Replay);
	// their number sets the number of callers.
	Times []int64
}

// Scenario is a workload and a runtime model. Every random choice derives
// from Seed.
type Scenario struct {
	Name        string
	Rules       []rule.Rule
	Boundary    rule.Boundary
	Strategies  []string
	Callers     int // one call each; ignored for Replay
	Workers     int // callers are dealt to workers round robin
	MaxInFlight int // slots for the gated strategies
	Arrivals    Arrivals
	// CallDuration is how long a call stays in flight after its send.
	CallDuration Dist
	Lateness     Dist
	OpCost       Dist
	// Skew is each worker's clock offset (missing entries are zero).
	Skew []time.Duration
	// Timeout is how long a caller waits for admission before giving up;
	// zero means forever.
	Timeout time.Duration
	Seed    uint64
	// SendDelay is the time from Acquire returning to the request's
	// arrival at the provider, where the checker judges it: one
	// distribution for every worker, or one per worker.
	SendDelay []Dist
	// RedisRTT is the round trip to Redis of the redis strategies: the
	// script runs when the request leg (half of it) arrives, and the caller
	// resumes after the reply leg.
	RedisRTT Dist
	// Margin widens every window the limiters enforce; the checker judges
	// the rules as written.
	Margin time.Duration
	// Costs are each call's costs, one distribution per unit the rules
	// meter, in the order the rules first name the units (the order a
	// limiter's AcquireCost and the checker's ObserveCost take them).
	Costs []UnitCost
	// Actual, when set, makes Costs each call's estimates, charged from its
	// send: the provider settles the call to an actual cost drawn from
	// Actual (one per unit, in the order of Costs) when its call duration
	// ends (docs/semantics.md, "Reserved costs").
	Actual []UnitCost
}

// UnitCost is the distribution of each call's cost in Unit; its draws, in
// nanoseconds, are the costs (ParseCostDistFiles).
type UnitCost struct {
	Unit string
	Dist Dist
}

// UnitCosts splits costs given nu = len(units) a send, in send order, into
// one slice per unit, as charts take them; nil when there are none.
func UnitCosts(flat []int64, units []string) map[string][]int64 {
	if len(units) == 0 {
		return nil
	}
	out := make(map[string][]int64, len(units))
	for u, name := range units {
		col := make([]int64, 0, len(flat)/len(units))
		for i := u; i < len(flat); i += len(units) {
			col = append(col, flat[i])
		}
		out[name] = col
	}
	return out
}

// Units names the units of Costs, in order.
func (s *Scenario) Units() []string {
	var units []string
	for _, c := range s.Costs {
		units = append(units, c.Unit)
	}
	return units
}

// StreamCosts is the PCG stream of a seed that each call's costs are
// drawn from, beside StreamArrivals.
const StreamCosts = 0x636f7374 // "cost"

// DrawCosts returns the costs of n calls on seed, call i's cost in unit u
// at i*len(s.Costs)+u: the same for every strategy of a seed, and nil
// when the rules meter no unit.
func (s *Scenario) DrawCosts(seed uint64, n int) []int64 {
	return drawUnits(s.Costs, seed, StreamCosts, n)
}

// drawUnits draws n calls' costs from costs, one per unit a call, on
// seed's stream; nil without costs.
func drawUnits(costs []UnitCost, seed, stream uint64, n int) []int64 {
	if len(costs) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, stream))
	out := make([]int64, n*len(costs))
	for i := range out {
		out[i] = int64(costs[i%len(costs)].Dist.Draw(rng))
	}
	return out
}

// StreamActual is the PCG stream of a seed that each call's actual costs
// are drawn from, beside StreamCosts: the estimates of a seed stay the
// same whether its scenario settles them or not.
const StreamActual = 0x61637475 // "actu"

// Reserved reports whether the scenario's calls are settled to actual
// costs after their estimates.
func (s *Scenario) Reserved() bool { return len(s.Actual) > 0 }

// DrawActuals returns the actual costs of n calls on seed, laid out as
// DrawCosts lays out the estimates; nil when the scenario settles none.
func (s *Scenario) DrawActuals(seed uint64, n int) []int64 {
	return drawUnits(s.Actual, seed, StreamActual, n)
}

// HasSendPath reports whether anything lies between a limiter's admission
// and the provider's count: a send delay or a Redis round trip.
func (s *Scenario) HasSendPath() bool {
	for _, d := range s.SendDelay {
		if !d.IsZero() {
			return true
		}
	}
	return !s.RedisRTT.IsZero()
}

// SendDelayFor returns worker w's send delay.
func (s *Scenario) SendDelayFor(w int) Dist {
	switch len(s.SendDelay) {
	case 0:
		return Dist{}
	case 1:
		return s.SendDelay[0]
	}
	return s.SendDelay[w]
}

// Validate reports the first inconsistency in s, its strategies aside:
// the strategy catalogue knows them (catalog.Validate checks them too).
func (s *Scenario) Validate() error { return s.ValidateWith(nil) }

// ValidateWith is Validate, with strategy, when not nil, checking each
// strategy name in turn; its error follows the scenario's name.
func (s *Scenario) ValidateWith(strategy func(name string) error) error {
	if err := s.validateFields(); err != nil {
		return err
	}
	if err := s.validateCosts(); err != nil {
		return err
	}
	for _, name := range s.Strategies {
		if strategy == nil {
			break
		}
		if err := strategy(name); err != nil {
			return fmt.Errorf("scenario %q: %w", s.Name, err)
		}
	}
	return s.validateArrivals()
}

// validateCosts checks that Costs gives one cost per unit the rules meter,
// in the order the rules first name them, and no other.
func (s *Scenario) validateCosts() error {
	var units []string
	for _, r := range s.Rules {
		if r.Unit != "" && !slices.Contains(units, r.Unit) {
			units = append(units, r.Unit)
		}
	}
	if got := s.Units(); !slices.Equal(got, units) {
		return fmt.Errorf("scenario %q: costs for units %q, but the rules meter %q", s.Name, got, units)
	}
	if len(s.Actual) == 0 {
		return nil
	}
	var actual []string
	for _, c := range s.Actual {
		actual = append(actual, c.Unit)
	}
	if !slices.Equal(actual, units) {
		return fmt.Errorf("scenario %q: actual costs for units %q, but the rules meter %q", s.Name, actual, units)
	}
	return nil
}

// validateFields checks the fields that stand alone.
func (s *Scenario) validateFields() error {
	switch {
	case len(s.Rules) == 0:
		return fmt.Errorf("scenario %q: no rules", s.Name)
	case len(s.Strategies) == 0:
		return fmt.Errorf("scenario %q: no strategies", s.Name)
	case s.Workers < 1:
		return fmt.Errorf("scenario %q: workers must be at least 1", s.Name)
	case s.MaxInFlight < 0:
		return fmt.Errorf("scenario %q: max_in_flight must not be negative", s.Name)
	case s.Timeout < 0:
		return fmt.Errorf("scenario %q: timeout must not be negative", s.Name)
	case len(s.Skew) > 0 && len(s.Skew) != s.Workers:
		return fmt.Errorf("scenario %q: %d skews for %d workers; give one per worker", s.Name, len(s.Skew), s.Workers)
	case len(s.SendDelay) > 1 && len(s.SendDelay) != s.Workers:
		return fmt.Errorf("scenario %q: %d send delays for %d workers; give one, or one per worker", s.Name, len(s.SendDelay), s.Workers)
	case s.Margin < 0:
		return fmt.Errorf("scenario %q: margin must not be negative", s.Name)
	case s.Arrivals.Kind == Replay && s.Callers != 0:
		return fmt.Errorf("scenario %q: callers are set by the replayed instants; leave callers at 0", s.Name)
	}
	return nil
}

// validateArrivals checks the arrival pattern and the span of virtual
// time it takes.
func (s *Scenario) validateArrivals() error {
	a := s.Arrivals
	switch a.Kind {
	case AllAtOnce:
	case Interval:
		if a.Every <= 0 {
			return fmt.Errorf("scenario %q: interval arrivals need a positive every", s.Name)
		}
	case Poisson:
		if !(a.Rate > 0) || math.IsInf(a.Rate, 0) {
			return fmt.Errorf("scenario %q: poisson arrivals need a positive rate", s.Name)
		}
	case Replay:
		if len(a.Times) == 0 {
			return fmt.Errorf("scenario %q: replay has no instants", s.Name)
		}
		for i := 1; i < len(a.Times); i++ {
			if a.Times[i] < a.Times[i-1] {
				return fmt.Errorf("scenario %q: replayed instant %d comes before the one above it", s.Name, i+1)
			}
		}
	default:
		return fmt.Errorf("scenario %q: unknown arrival pattern %q", s.Name, a.Kind)
	}
	if a.Kind != Replay && (s.Callers < 1 || s.Callers > maxCallers) {
		return fmt.Errorf("scenario %q: callers must be from 1 to %d", s.Name, maxCallers)
	}
	// Keep every instant far from int64 overflow (about 146 years).
	const horizon = float64(1 << 62)
	span := float64(a.Start)
	switch a.Kind {
	case Interval:
		span += float64(a.Every) * float64(s.Callers)
	case Poisson:
		span += 20 * float64(s.Callers) / a.Rate * 1e9 // far beyond any plausible draw
	}
	if span >= horizon || float64(s.Timeout) >= horizon {
		return fmt.Errorf("scenario %q: arrivals or timeout reach beyond a century of virtual time", s.Name)
	}
	return nil
}

// ArrivalTimes returns when each caller arrives on seed, in caller order:
// the workload every strategy of a run sees, and that rlcheck run replays on
// the real clock.
func (s *Scenario) ArrivalTimes(seed uint64) []int64 { return s.ArrivalTimesInto(nil, seed) }

// ArrivalTimesInto is ArrivalTimes in buf's memory when it is large enough.
func (s *Scenario) ArrivalTimesInto(buf []int64, seed uint64) []int64 {
	a := s.Arrivals
	n := s.Callers
	if a.Kind == Replay {
		n = len(a.Times)
	}
	out := buf[:0]
	if cap(out) < n {
		out = make([]int64, n)
	}
	out = out[:n]
	if a.Kind == Replay {
		base := a.Times[0]
		for i, t := range a.Times {
			out[i] = int64(a.Start) + t - base
		}
		return out
	}
	t := int64(a.Start)
	r := rand.New(rand.NewPCG(seed, StreamArrivals))
	for i := range out {
		switch a.Kind {
		case Interval:
			if i > 0 {
				t += int64(a.Every)
			}
		case Poisson:
			t += int64(toDur(r.ExpFloat64() * 1e9 / a.Rate))
		}
		out[i] = t
	}
	return out
}

// maxCallers bounds a scenario's size so a typo cannot exhaust memory: a
// caller alive at once with all the others (all-at-once arrivals, parked on
// a lock) costs about 8.6 KB, its coroutine's stack mostly
// (BenchmarkCallerBytes), so 2 million of them take about 17 GB.
const maxCallers = 2_000_000

// StreamArrivals is the PCG stream of a seed that arrivals are drawn
// from; the runners draw their other choices from other streams.
const StreamArrivals = 0x61727269 // "arri"

// FieldError is a bad value for one field of a scenario, named as the
// model names it ("strategy", "lateness", "op_cost"); a command reports
// it under the name of the flag that set the field (Format).
type FieldError struct {
	Field string
	Value string // quoted after the name when not empty
	Err   error
}

func (e *FieldError) Error() string { return e.Format(e.Field) }

// Format is the error with name standing for the field.
func (e *FieldError) Format(name string) string {
	if e.Value != "" {
		return fmt.Sprintf("%s %q %v", name, e.Value, e.Err)
	}
	return fmt.Sprintf("%s: %v", name, e.Err)
}

func (e *FieldError) Unwrap() error { return e.Err }

// Pick returns name when the scenario runs that strategy, its first
// strategy when name is empty, and a *FieldError naming the strategies
// run otherwise.
func (s *Scenario) Pick(name string) (string, error) {
	if name == "" && len(s.Strategies) > 0 {
		return s.Strategies[0], nil
	}
	if slices.Contains(s.Strategies, name) {
		return name, nil
	}
	return "", &FieldError{Field: "strategy", Value: name,
		Err: fmt.Errorf("is not among the strategies run (%s)", strings.Join(s.Strategies, ", "))}
}

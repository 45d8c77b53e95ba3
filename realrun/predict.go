package realrun

import (
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// Prediction is the virtual clock's forecast for a scenario: each
// strategy's violations per rule over many seeds.
type Prediction struct {
	Seeds      int         `json:"seeds"`
	Strategies []Predicted `json:"strategies"`
}

// Predicted is one strategy's forecast.
type Predicted struct {
	Name               string  `json:"name"`
	RunsWithViolations int     `json:"runs_with_violations"`
	Rules              []Range `json:"rules"`
}

// Range is the spread of one rule's violation count over the seeds, by
// nearest rank.
type Range struct {
	P5   int64   `json:"p5"`
	P50  int64   `json:"p50"`
	P95  int64   `json:"p95"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
}

// Contains reports whether n lies within [P5, P95].
func (r Range) Contains(n int64) bool { return r.P5 <= n && n <= r.P95 }

// Seeds of the prediction when none are asked for: DefaultSeeds, or
// CostlySeeds when a strategy runs every try on an embedded Redis of its
// own (catalog.Strategy.Costly), where a seed costs 10 to 100 times more.
const (
	DefaultSeeds = 1000
	CostlySeeds  = 100
)

// Costly returns the strategies of s that are catalog.Strategy.Costly.
func Costly(s *workload.Scenario) []string {
	var out []string
	for _, name := range s.Strategies {
		if st, ok := catalog.Lookup(name); ok && st.Costly {
			out = append(out, name)
		}
	}
	return out
}

// SeedsFor returns the prediction's seed count for s when none is asked for.
func SeedsFor(s *workload.Scenario) int {
	if len(Costly(s)) > 0 {
		return CostlySeeds
	}
	return DefaultSeeds
}

// PredictOptions are what the prediction of a run shares with it.
type PredictOptions struct {
	// Strategies limits the prediction to these names (nil: the scenario's).
	Strategies []string
	// Redis is the distributed strategies' store (nil: in-process).
	Redis redis.Scripter
	// Progress, when set, is called after each run with the runs done so
	// far and the total.
	Progress func(done, total int)
}

// SeedCounts are one strategy's violations on the virtual clock: per
// rule, per seed.
type SeedCounts struct {
	Name    string
	PerRule [][]int64
}

// A Simulator runs s on the virtual clock over seeds s.Seed ..
// s.Seed+seeds-1 and counts each strategy's violations; the simulator
// (package simulate) is one, wired in by the command (cmd/rlcheck/internal/cli), so
// that the real-clock runner does not depend on it.
type Simulator func(s *workload.Scenario, seeds int, o PredictOptions) ([]SeedCounts, error)

// Predict runs s on sim over seeds s.Seed .. s.Seed+seeds-1.
func Predict(sim Simulator, s *workload.Scenario, seeds int, strategies []string) (*Prediction, error) {
	return predict(sim, s, seeds, PredictOptions{Strategies: strategies})
}

// progressOf reports on w, at every tenth of the runs, how far the
// prediction has gone.
func progressOf(w io.Writer) func(done, total int) {
	var mu sync.Mutex
	return func(done, total int) {
		if done*10/total != (done-1)*10/total {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(w, "prediction: %d of %d runs\n", done, total)
		}
	}
}

func predict(sim Simulator, s *workload.Scenario, seeds int, opt PredictOptions) (*Prediction, error) {
	counts, err := sim(s, seeds, opt)
	if err != nil {
		return nil, err
	}
	p := &Prediction{Seeds: seeds}
	for _, st := range counts {
		ps := Predicted{Name: st.Name}
		for run := range seeds {
			for _, perRun := range st.PerRule {
				if perRun[run] > 0 {
					ps.RunsWithViolations++
					break
				}
			}
		}
		for _, perRun := range st.PerRule {
			ps.Rules = append(ps.Rules, rangeOf(perRun))
		}
		p.Strategies = append(p.Strategies, ps)
	}
	return p, nil
}

// rangeOf is the spread of perRun, its mean as the simulator computes it.
func rangeOf(perRun []int64) Range {
	v := slices.Clone(perRun)
	slices.Sort(v)
	var sum int64
	for _, x := range v {
		sum += x
	}
	mean := float64(sum) / float64(len(v))
	return Range{P5: rank(v, 5), P50: rank(v, 50), P95: rank(v, 95), Max: v[len(v)-1], Mean: mean}
}

// rank is the nearest-rank percentile of sorted, as simulate computes it.
func rank(sorted []int64, p int) int64 {
	i := max((p*len(sorted)+99)/100, 1)
	return sorted[i-1]
}

// lookup returns the forecast of strategy name, or nil.
func (p *Prediction) lookup(name string) *Predicted {
	for i := range p.Strategies {
		if p.Strategies[i].Name == name {
			return &p.Strategies[i]
		}
	}
	return nil
}

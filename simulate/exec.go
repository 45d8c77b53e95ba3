package simulate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/clock/virtual"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// row is one strategy of a report: a Go strategy of the catalog, or one
// that an adapter program (prog) offers under st.Name.
type row struct {
	st   catalog.Strategy
	prog *adapter.Program
}

// rows returns the strategies a run reports: names from the catalog, then
// every strategy of opt.Exec.
func rows(names []string, opt Options) ([]row, error) {
	var out []row
	for _, name := range names {
		st, ok := catalog.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("simulate: unknown strategy %q (known: %s)", name, catalog.Known())
		}
		out = append(out, row{st: st})
	}
	if opt.Exec == nil {
		return out, nil
	}
	for _, name := range opt.Exec.Strategies() {
		if _, ok := catalog.Lookup(name); ok {
			return nil, fmt.Errorf("simulate: adapter %q offers strategy %q, the name of a Go strategy", opt.Exec.Command(), name)
		}
		out = append(out, row{st: catalog.Strategy{Name: name}, prog: opt.Exec})
	}
	return out, nil
}

// runRow runs one row on seed, a Go strategy on pool's coroutines.
func runRow(s *workload.Scenario, rw row, seed uint64, opt Options, pool *virtual.Pool) (StrategyResult, error) {
	if rw.prog == nil {
		return runStrategy(s, rw.st, seed, opt, pool)
	}
	return RunExec(s, rw.prog, rw.st.Name, seed)
}

// RunExec runs strategy name of the adapter program prog over s on seed,
// as RunStrategy runs a Go strategy: the program answers each call's send
// on its virtual clock, and the checker judges the sends.
func RunExec(s *workload.Scenario, prog *adapter.Program, name string, seed uint64) (StrategyResult, error) {
	run := adapter.NewRun(s, name, seed)
	ans, err := prog.Run(run)
	if err != nil {
		return StrategyResult{}, err
	}
	return execResult(s, run, ans)
}

// execResult turns an adapter's answer into the result a Go strategy's
// run gives: the sends in time order (ties in call order) take the same
// send path, and the checker judges them.
func execResult(s *workload.Scenario, run *adapter.Run, ans *adapter.Answer) (StrategyResult, error) {
	r := &simRun{s: s, path: rand.New(rand.NewPCG(run.Seed, streamPath)), sendPath: s.HasSendPath()}
	r.res = StrategyResult{Name: run.Strategy, Calls: len(run.Calls), Wall: s.Arrivals.Wall}
	var sent []int
	for id, c := range ans.Calls {
		switch c.Outcome {
		case adapter.Sent:
			sent = append(sent, id)
		case adapter.Refused:
			r.res.Refused++
		case adapter.Cancelled:
			r.res.Cancelled++
		}
	}
	slices.SortStableFunc(sent, func(a, b int) int { return cmp.Compare(ans.Calls[a].SendNS, ans.Calls[b].SendNS) })
	var spans [][2]int64 // each call's time in flight
	for _, id := range sent {
		c, at := run.Calls[id], ans.Calls[id].SendNS
		var delay int64
		if r.sendPath {
			delay = int64(r.admit(c.Worker, at, at))
			r.admCosts = append(r.admCosts, c.Costs...)
		}
		r.res.SendCosts = append(r.res.SendCosts, c.Costs...)
		r.res.Sends = append(r.res.Sends, at+delay)
		r.res.SendWorkers = append(r.res.SendWorkers, int32(c.Worker))
		spans = append(spans, [2]int64{at, at + delay + c.DurationNS})
	}
	if len(s.Costs) == 0 {
		r.res.SendCosts = nil
	}
	r.res.MaxInFlight = mostAtOnce(spans)
	return r.finish(false)
}

// mostAtOnce is the most spans [from, to) that overlap; a span of zero
// length is in flight at its instant alone, beside the longer spans open
// then, as a Go caller with no call duration is.
func mostAtOnce(spans [][2]int64) int {
	type edge struct {
		at   int64
		step int // -1 an end, +1 a start, 0 a span of zero length
	}
	edges := make([]edge, 0, 2*len(spans))
	for _, sp := range spans {
		if sp[1] <= sp[0] {
			edges = append(edges, edge{sp[0], 0})
			continue
		}
		edges = append(edges, edge{sp[0], 1}, edge{sp[1], -1})
	}
	// At one instant: ends, then starts, then the spans of zero length.
	order := func(e edge) int { return map[int]int{-1: 0, 1: 1, 0: 2}[e.step] }
	slices.SortStableFunc(edges, func(a, b edge) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(order(a), order(b)))
	})
	most, n := 0, 0
	for _, e := range edges {
		n += e.step
		most = max(most, n+1-min(1, e.step*e.step))
	}
	return most
}

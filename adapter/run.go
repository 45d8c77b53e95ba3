package adapter

import (
	"fmt"
	"math/rand/v2"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// Version is the protocol version this package speaks: the program's
// hello and every run carry it.
const Version = 1

// Run is one run as rlcheck sends it: one JSON line.
type Run struct {
	Type     string `json:"type"` // "run"
	Version  int    `json:"version"`
	Run      int64  `json:"run"` // numbers the runs of one process from 1
	Strategy string `json:"strategy"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Key names the run's state where it is shared (a Redis key prefix).
	Key         string     `json:"key"`
	Rules       []RuleSpec `json:"rules"`
	Boundary    string     `json:"boundary"`
	MarginNS    int64      `json:"margin_ns"`
	Units       []string   `json:"units"`
	Workers     int        `json:"workers"`
	MaxInFlight int        `json:"max_in_flight"`
	TimeoutNS   int64      `json:"timeout_ns"`
	Calls       []Call     `json:"calls"`
	Lateness    Draws      `json:"lateness"`
	OpCost      Draws      `json:"op_cost"`
}

// RuleSpec is a rule in its text form and its parsed fields.
type RuleSpec struct {
	Text     string `json:"text"`
	Limit    int    `json:"limit"`
	WindowNS int64  `json:"window_ns"`
	Unit     string `json:"unit"`
	Kind     string `json:"kind"`
	Burst    int    `json:"burst"`
	OffsetNS int64  `json:"offset_ns"`
	Zone     string `json:"zone"`
}

// Call is one caller: it arrives, asks its worker's limiter, sends, and
// stays in flight for DurationNS.
type Call struct {
	ID         int     `json:"id"`
	ArrivalNS  int64   `json:"arrival_ns"`
	Worker     int     `json:"worker"`
	Costs      []int64 `json:"costs"` // one per unit, in the order of Run.Units
	DurationNS int64   `json:"duration_ns"`
}

// Draws are a distribution's text form and values drawn from it on the
// run's seed (one for a constant); the program takes them in order and
// starts again from the first when it has used them all.
type Draws struct {
	Dist    string  `json:"dist"`
	DrawsNS []int64 `json:"draws_ns"`
}

// PCG streams of a seed for what a run draws beside workload's streams.
const (
	streamLateness = 0x6c617465 // "late"
	streamOpCost   = 0x6f70636f // "opco"
	streamDuration = 0x64757261 // "dura"
)

// NewRun returns strategy's run of s on seed: the arrivals and costs every
// Go strategy of the seed sees, and lateness, operation costs and call
// durations drawn from the scenario's distributions.
func NewRun(s *workload.Scenario, strategy string, seed uint64) *Run {
	arrivals := s.ArrivalTimes(seed)
	costs := s.DrawCosts(seed, len(arrivals))
	nu := len(s.Costs)
	run := &Run{Type: "run", Version: Version, Strategy: strategy, Scenario: s.Name, Seed: seed,
		Key: fmt.Sprintf("rlcheck:%s:%s:%d", s.Name, strategy, seed), Boundary: s.Boundary.String(),
		MarginNS: int64(s.Margin), Units: s.Units(), Workers: s.Workers, MaxInFlight: s.MaxInFlight,
		TimeoutNS: int64(s.Timeout), Calls: make([]Call, len(arrivals))}
	if run.Units == nil {
		run.Units = []string{}
	}
	for _, r := range s.Rules {
		run.Rules = append(run.Rules, specOf(r))
	}
	dur := rand.New(rand.NewPCG(seed, streamDuration))
	for i, at := range arrivals {
		c := Call{ID: i, ArrivalNS: at, Worker: i % s.Workers, Costs: []int64{}}
		if nu > 0 {
			c.Costs = costs[i*nu : (i+1)*nu]
		}
		c.DurationNS = int64(s.CallDuration.Draw(dur))
		run.Calls[i] = c
	}
	n := 8*len(arrivals) + 64
	run.Lateness = draw(s.Lateness, n, rand.New(rand.NewPCG(seed, streamLateness)))
	run.OpCost = draw(s.OpCost, n, rand.New(rand.NewPCG(seed, streamOpCost)))
	return run
}

func specOf(r rule.Rule) RuleSpec {
	return RuleSpec{Text: r.String(), Limit: r.Limit, WindowNS: int64(r.Window), Unit: r.Unit,
		Kind: r.Kind.String(), Burst: r.Burst, OffsetNS: int64(r.Offset), Zone: r.Zone}
}

// draw draws n values of d, or one when d is a constant.
func draw(d workload.Dist, n int, r *rand.Rand) Draws {
	if d.Kind == workload.Fixed {
		n = 1
	}
	out := Draws{Dist: d.String(), DrawsNS: make([]int64, n)}
	for i := range out.DrawsNS {
		out.DrawsNS[i] = int64(d.Draw(r))
	}
	return out
}

package realrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/workload"
)

// Scale returns a copy of s running speed times faster: windows, arrivals,
// call durations, skews and the timeout shrink by speed, while timer
// lateness and operation cost, which belong to the machine and not to the
// workload, stay as they are. At a high speed they therefore weigh more
// against each window, on the real clock and in the prediction alike.
func Scale(s *workload.Scenario, speed float64) (*workload.Scenario, error) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		return nil, fmt.Errorf("realrun: speed %v: want a positive number", speed)
	}
	c := *s
	if speed == 1 {
		return &c, nil
	}
	sd := func(d time.Duration) time.Duration { return time.Duration(math.Round(float64(d) / speed)) }
	c.Rules = make([]rule.Rule, len(s.Rules))
	for i, r := range s.Rules {
		c.Rules[i] = r // keeps the rule's bookkeeping (exact or bucketed)
		c.Rules[i].Window = sd(r.Window)
		if c.Rules[i].Window < 1 {
			return nil, fmt.Errorf("realrun: speed %v shrinks rule %v to nothing", speed, r)
		}
	}
	c.Arrivals.Start = sd(s.Arrivals.Start)
	c.Arrivals.Every = sd(s.Arrivals.Every)
	c.Arrivals.Rate = s.Arrivals.Rate * speed
	if s.Arrivals.Times != nil {
		c.Arrivals.Times = make([]int64, len(s.Arrivals.Times))
		for i, t := range s.Arrivals.Times {
			c.Arrivals.Times[i] = int64(sd(time.Duration(t)))
		}
	}
	c.CallDuration = s.CallDuration.Scaled(sd)
	c.SendDelay = make([]workload.Dist, len(s.SendDelay))
	for i, d := range s.SendDelay {
		c.SendDelay[i] = d.Scaled(sd)
	}
	c.RedisRTT = s.RedisRTT.Scaled(sd)
	c.Margin = sd(s.Margin)
	c.Skew = make([]time.Duration, len(s.Skew))
	for i, d := range s.Skew {
		c.Skew[i] = sd(d)
	}
	c.Timeout = sd(s.Timeout)
	return &c, nil
}

// callDurations draws every caller's call duration up front, in caller
// order, so goroutines never share the random source.
func callDurations(s *workload.Scenario, seed uint64, n int) []time.Duration {
	r := rand.New(rand.NewPCG(seed, streamCalls))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = s.CallDuration.Draw(r)
	}
	return out
}

// sendDelays draws every caller's send delay up front, in caller order,
// each from its worker's distribution.
func sendDelays(s *workload.Scenario, seed uint64, n int) []time.Duration {
	r := rand.New(rand.NewPCG(seed, streamPath))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = s.SendDelayFor(i % s.Workers).Draw(r)
	}
	return out
}

// The PCG streams of call durations and send delays on the real clock.
const (
	streamCalls = 0x63616c6c // "call"
	streamPath  = 0x70617468 // "path"
)

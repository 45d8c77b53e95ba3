package audit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/internal/specimens/libs"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
)

// DefaultSearchTries is how many schedules the worst-case search runs per
// strategy beyond its starting points.
const DefaultSearchTries = 40

// Worst is the worst arrival schedule the search found for one strategy
// and setting: the one with the most sends in one window over the limit.
type Worst struct {
	Strategy string
	Config   catalog.LibConfig
	// Times are the arrivals, in nanoseconds, non-decreasing.
	Times []int64
	// Rules are the checker's figures for that schedule on Seed.
	Rules []RuleOutcome
	// Tried counts the schedules run.
	Tried int
	// File is the scenario written for it (empty when none was).
	File string

	design design
}

// burst is n arrivals at one instant.
type burst struct {
	at int64
	n  int
}

func scheduleTimes(bs []burst) []int64 {
	slices.SortStableFunc(bs, func(a, b burst) int {
		switch {
		case a.at < b.at:
			return -1
		case a.at > b.at:
			return 1
		}
		return 0
	})
	var out []int64
	for _, b := range bs {
		for range b.n {
			out = append(out, b.at)
		}
	}
	return out
}

// score is the largest count in one window over its limit, across rules.
func score(rs []RuleOutcome) float64 {
	var s float64
	for _, r := range rs {
		s = max(s, float64(r.MaxInWindow)/float64(r.Rule.Limit))
	}
	return s
}

// searchWorst looks for the schedule that puts the most sends in one window
// over the limit for design d with cfg: it starts from the audit's
// replayed workloads and mutates the best so far (burst sizes, idle spells,
// offsets against the fastest rule's window edges), seeded by opt.Seed, and
// judges each on opt.Seed as the simulator would.
func searchWorst(opt *Options, d design, cfg catalog.LibConfig, tries int) (*Worst, error) {
	run, err := d.Construct(cfg)
	if err != nil {
		return nil, err
	}
	minW, minN, maxW := opt.Rules[0].Window, opt.Rules[0].Limit, opt.Rules[0].Window
	for _, r := range opt.Rules {
		if r.Window < minW {
			minW, minN = r.Window, r.Limit
		}
		maxW = max(maxW, r.Window)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5ea4c4))
	w := &Worst{Strategy: d.Name(), Config: cfg, design: d}
	eval := func(bs []burst) ([]RuleOutcome, []int64, error) {
		times := scheduleTimes(slices.Clone(bs))
		wl := Workload{Name: "search", Arrivals: workload.Arrivals{Kind: workload.Replay, Times: times}}
		res, err := run(wl.Scenario(opt, d.Name()), opt.Seed)
		if err != nil {
			return nil, nil, err
		}
		w.Tried++
		rs := make([]RuleOutcome, len(res.Rules))
		for k, rr := range res.Rules {
			rs[k] = RuleOutcome{Rule: rr.Rule, Violations: rr.Violations, MaxInWindow: rr.MaxInWindow}
		}
		return rs, times, nil
	}
	edge := (2*maxW/minW + 1) * minW // the first edge after an idle spell
	starts := [][]burst{
		{{0, 1}, {int64(edge), min(3*minN, maxCallers-1)}},
		{{0, 1}, {int64(edge - minW), 1}, {int64(edge - max(minW/100, 1)), minN}, {int64(edge), minN}},
	}
	var best []burst
	for _, bs := range starts {
		rs, times, err := eval(bs)
		if err != nil {
			return nil, err
		}
		if best == nil || score(rs) > score(w.Rules) {
			best, w.Rules, w.Times = bs, rs, times
		}
	}
	for range tries {
		bs := mutate(slices.Clone(best), rng, minW, minN, edge)
		if total(bs) > maxCallers {
			continue
		}
		rs, times, err := eval(bs)
		if err != nil {
			return nil, err
		}
		if score(rs) >= score(w.Rules) {
			best, w.Rules, w.Times = bs, rs, times
		}
	}
	return w, nil
}

// total is the calls of a schedule.
func total(bs []burst) int {
	n := 0
	for _, b := range bs {
		n += b.n
	}
	return n
}

// mutate changes one thing in the schedule bs (never its opening call at
// 0), drawing from rng: minW and minN are the fastest rule's window and
// limit, edge the first window edge after the idle spell.
func mutate(bs []burst, rng *rand.Rand, minW time.Duration, minN int, edge time.Duration) []burst {
	i := 1 + rng.IntN(len(bs)-1) // never the opening call at 0
	switch rng.IntN(5) {
	case 0: // resize a burst
		bs[i].n = max(1, bs[i].n+rng.IntN(minN+1)-minN/2)
	case 1: // move a burst by up to a tenth of the fastest window
		bs[i].at = max(1, bs[i].at+rng.Int64N(int64(minW/5)+1)-int64(minW/10))
	case 2: // a burst just before or at an edge
		k := int64(edge/minW) + rng.Int64N(4)
		off := []int64{0, -1, -int64(time.Millisecond), -int64(minW / 100), int64(minW / 2)}[rng.IntN(5)]
		bs = append(bs, burst{max(1, k*int64(minW)+off), 1 + rng.IntN(minN)})
	case 3: // drop a burst
		if len(bs) > 2 {
			bs = slices.Delete(bs, i, i+1)
		}
	case 4: // stretch or shrink the idle spell before everything after the opening call
		d := rng.Int64N(int64(minW)+1) - int64(minW)/2
		for j := 1; j < len(bs); j++ {
			bs[j].at = max(1, bs[j].at+d)
		}
	}
	return bs
}

// writeReplay writes w as a scenario dir/NAME.yaml that `rlcheck simulate`
// runs, beside its arrivals dir/NAME.txt (decimal seconds a line), and
// returns the scenario's path. The scenario names the strategy as the
// simulator's table has it, that is with the default setting.
func writeReplay(dir string, opt *Options, w *Worst) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := "worst-" + w.Strategy
	var times strings.Builder
	for _, t := range w.Times {
		fmt.Fprintf(&times, "%d.%09d\n", t/int64(time.Second), t%int64(time.Second))
	}
	if err := os.WriteFile(filepath.Join(dir, base+".txt"), []byte(times.String()), 0o644); err != nil {
		return "", err
	}
	worst := w.Rules[0]
	for _, r := range w.Rules {
		if float64(r.MaxInWindow)/float64(r.Rule.Limit) > float64(worst.MaxInWindow)/float64(worst.Rule.Limit) {
			worst = r
		}
	}
	rules := make([]string, len(opt.Rules))
	for i, r := range opt.Rules {
		rules[i] = r.String()
	}
	note := ""
	if !reflect.DeepEqual(w.Config, libs.Default()) {
		note = fmt.Sprintf("# Found with %s; the simulator's %s has the default setting.\n", settingWords(w.design, w.Config), w.Strategy)
	}
	yaml := fmt.Sprintf(`# Written by rlcheck audit --search: keep it as a regression case.
%sname: %s
description: >
  The worst arrival schedule the search found for %s (%s) under %s:
  %d sends in one window of %s (limit %d), seed %d.
rules: [%s]
boundary: %s
strategies: [%s]
workers: 1
arrivals:
  pattern: replay
  file: %s.txt
call_duration: 0
lateness: %s
op_cost: %s
seed: %d
`, note, base, w.Strategy, settingWords(w.design, w.Config), strings.Join(rules, ", "), worst.MaxInWindow, worst.Rule, worst.Rule.Limit, opt.Seed,
		strings.Join(rules, ", "), boundaryName(opt.Boundary), w.Strategy, base, opt.Lateness, opt.OpCost, opt.Seed)
	path := filepath.Join(dir, base+".yaml")
	return path, os.WriteFile(path, []byte(yaml), 0o644)
}

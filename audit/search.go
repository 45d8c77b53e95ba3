package audit

import (
	"time"

	"github.com/rlcheck/rlcheck/simulate"
	"github.com/rlcheck/rlcheck/strategies/libs"
)

// candidates lists the settings the search tries for strategy name, most
// generous first: the smallest margin, then the largest burst or slack.
// Margin costs throughput all day; burst and slack only matter after idle.
func candidates(opt *Options, name string) []libs.Config {
	minN, minW := opt.Rules[0].Limit, opt.Rules[0].Window
	for _, r := range opt.Rules {
		minN, minW = min(minN, r.Limit), min(minW, r.Window)
	}
	margins := []time.Duration{0}
	for _, div := range []time.Duration{1000, 500, 200, 100, 50, 20, 10, 5, 2, 1} {
		if m := minW / div; m > margins[len(margins)-1] {
			margins = append(margins, m)
		}
	}
	var out []libs.Config
	for _, m := range margins {
		c := opt.Config
		c.Margin = m
		if name == simulate.UberRatelimit {
			for s := opt.Config.Slack; s >= 0; s-- {
				c.Slack = s
				out = append(out, c)
			}
			continue
		}
		c.Burst = opt.Config.Burst
		out = append(out, c)
		top := minN - 1
		if opt.Config.Burst > 0 {
			top = min(top, opt.Config.Burst-1)
		}
		for b := top; b >= 1; b-- {
			c.Burst = b
			out = append(out, c)
		}
	}
	return out
}

// search fills sa.Safe with the first candidate clean on every workload over
// opt.Seeds seeds and then over opt.Verify seeds.
func search(opt *Options, wls []Workload, sa *StrategyAudit) error {
	for _, c := range candidates(opt, sa.Name) {
		sa.Tried++
		o, err := run(opt, wls, sa.Name, c, opt.Seeds, true)
		if err != nil {
			return err
		}
		if o == nil {
			continue
		}
		if o, err = run(opt, wls, sa.Name, c, opt.Verify, true); err != nil {
			return err
		}
		if o == nil {
			continue
		}
		sa.Safe, sa.SafeOutcomes = &c, o
		return nil
	}
	return nil
}

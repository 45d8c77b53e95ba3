package plots

// Waits draws, per strategy, how long callers waited on each rule (summed
// over callers, attributed to the rule that asked for the longest wait), and
// writes it to path (.png or .svg).
func Waits(path string, s Summary) error {
	if _, err := checkExt(path); err != nil {
		return err
	}
	if err := s.check("waits"); err != nil {
		return err
	}
	groups := make([]barGroup, len(s.Strategies))
	for i, r := range s.Strategies {
		g := barGroup{name: strategyLabel(r), color: StrategyColor(r.Name)}
		for k, ru := range s.Rules {
			if k < len(r.Waited) {
				g.values = append(g.values, r.Waited[k].Seconds())
				g.labels = append(g.labels, ru.String()+": "+seconds(r.Waited[k]))
			} else {
				g.values = append(g.values, 0)
				g.labels = append(g.labels, ru.String()+": not recorded")
			}
		}
		groups[i] = g
	}
	p, hgt, err := groupedBars("", "seconds callers slept because of the rule, summed over callers", groups, len(s.Rules), false)
	if err != nil {
		return err
	}
	return drawBars(path, "Time spent waiting, per rule", subtitleOf(s, "each wait is charged to the rule that asked for the longest sleep"), p, hgt)
}

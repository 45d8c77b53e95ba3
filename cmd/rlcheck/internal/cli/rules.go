package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
)

// ErrNoRules is Load's error when the flags name neither a rule nor a cap.
var ErrNoRules = errors.New("no rules: give --rule 5/1s (repeatable), --rules 5/1s,12/3s or --contract FILE")

// RuleFlags are the flags that name a contract, as check reads them:
// --contract FILE, --rule (repeatable), --rules (a list) and --boundary.
type RuleFlags struct {
	Contract string
	Rule     []string
	Rules    string
	Boundary string
	// Warn receives Load's warnings (a rule given twice); nil is os.Stderr.
	Warn io.Writer
}

// Add registers the flags on fs.
func (f *RuleFlags) Add(fs *pflag.FlagSet) {
	fs.StringVar(&f.Contract, "contract", "", "a contract file (YAML) naming the rules, the in-flight cap, the boundary and how the log is read (docs/check.md)")
	fs.StringArrayVar(&f.Rule, "rule", nil, "a rule LIMIT/WINDOW, e.g. 5/1s (repeatable; added to the contract's rules, a rule given twice is checked once)")
	fs.StringVar(&f.Rules, "rules", "", "comma-separated rules, e.g. 10/s,500/min,10000/day (added to the contract's rules, a rule given twice is checked once)")
	fs.StringVar(&f.Boundary, "boundary", "", "window ends that count: half-open [t, t+W) (the default) or closed [t, t+W]")
}

// given reports whether any of the flags names a rule or a contract.
func (f *RuleFlags) given() bool {
	return f.Contract != "" || len(f.Rule) > 0 || f.Rules != "" || f.Boundary != ""
}

// Load returns the contract the flags name: the file's, with the rules
// given on the command line added (they extend the contract, never
// replace it) and --boundary, when given, overriding its boundary. A rule
// given twice (the same contract: limit, unit, window and kind, in the
// contract or the flags)
// is kept once, where it was first given, with a warning. It needs at
// least one rule or a cap.
func (f *RuleFlags) Load() (contract.Contract, error) {
	var c contract.Contract
	type given struct {
		r     rule.Rule
		where string
	}
	var rules []given
	if f.Contract != "" {
		var err error
		if c, err = contract.Load(f.Contract); err != nil {
			return c, err
		}
		for _, r := range c.Rules {
			rules = append(rules, given{r, "the contract " + f.Contract})
		}
	}
	for _, s := range f.Rule {
		r, err := rule.Parse(s)
		if err != nil {
			return c, err
		}
		rules = append(rules, given{r, "--rule " + s})
	}
	if f.Rules != "" {
		rs, err := rule.ParseList(f.Rules)
		if err != nil {
			return c, err
		}
		for _, r := range rs {
			rules = append(rules, given{r, "--rules"})
		}
	}
	warn := f.Warn
	if warn == nil {
		warn = os.Stderr
	}
	c.Rules = nil
	seen := map[rule.Rule]given{}
	for _, g := range rules {
		k := g.r.Contract() // limit, unit, window and kind; not the bookkeeping
		if first, ok := seen[k]; ok {
			fmt.Fprintf(warn, "rlcheck: warning: rule %s is given twice (in %s, then in %s): checked once, as %s\n", g.r, first.where, g.where, first.r)
			continue
		}
		seen[k] = g
		c.Rules = append(c.Rules, g.r)
	}
	if f.Boundary != "" {
		b, err := rule.ParseBoundary(f.Boundary)
		if err != nil {
			return c, err
		}
		c.Boundary = b
	}
	if len(c.Rules) == 0 && c.MaxInFlight == 0 {
		return c, ErrNoRules
	}
	return c, nil
}

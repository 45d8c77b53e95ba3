package cli

import (
	"errors"

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
}

// Add registers the flags on fs.
func (f *RuleFlags) Add(fs *pflag.FlagSet) {
	fs.StringVar(&f.Contract, "contract", "", "a contract file (YAML) naming the rules, the in-flight cap and the boundary")
	fs.StringArrayVar(&f.Rule, "rule", nil, "a rule LIMIT/WINDOW, e.g. 5/1s (repeatable)")
	fs.StringVar(&f.Rules, "rules", "", "comma-separated rules, e.g. 10/s,500/min,10000/day")
	fs.StringVar(&f.Boundary, "boundary", "", "window ends that count: half-open [t, t+W) (the default) or closed [t, t+W]")
}

// Load returns the contract the flags name: the file's, with the rules
// given on the command line added and --boundary, when given, overriding
// its boundary. It needs at least one rule or a cap.
func (f *RuleFlags) Load() (contract.Contract, error) {
	var c contract.Contract
	if f.Contract != "" {
		var err error
		if c, err = contract.Load(f.Contract); err != nil {
			return c, err
		}
	}
	for _, s := range f.Rule {
		r, err := rule.Parse(s)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	if f.Rules != "" {
		rs, err := rule.ParseList(f.Rules)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, rs...)
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

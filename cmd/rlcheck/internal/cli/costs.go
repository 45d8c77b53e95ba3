package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/sendlog"
)

// CostSources says where check reads the cost of each unit the rules
// meter: the CSV column or JSON-lines field a --cost UNIT=NAME flag names
// (a dotted path for a nested field, a 1-based index for a column), else
// the column or field named as the unit itself.
func CostSources(rules []rule.Rule, costFlags []string) ([]sendlog.CostSource, error) {
	units := rule.Units(rules)
	if len(units) > sendlog.MaxCosts {
		return nil, fmt.Errorf("the rules meter %d units (%s): check reads at most %d", len(units), strings.Join(units, ", "), sendlog.MaxCosts)
	}
	flags, err := parseCosts(costFlags, "UNIT=COLUMN, such as tokens=total_tokens", units, false)
	if err != nil {
		return nil, err
	}
	var out []sendlog.CostSource
	for _, u := range units {
		name := u
		if i := slices.IndexFunc(flags, func(c costFlag) bool { return c.unit == u }); i >= 0 {
			name = flags[i].name
		}
		out = append(out, sendlog.CostSource{Unit: u, Col: name, Field: name})
	}
	return out, nil
}

// costFlag is one --cost flag: its text, the unit and the name of the
// column, field or header that holds the unit's cost.
type costFlag struct{ text, unit, name string }

// parseCosts reads --cost flags, the one parser of every command that
// takes them: UNIT=NAME, or with bare UNIT alone (named as the unit);
// each unit at most once, and with units (the units the rules meter) one
// of them. shape says what to write, for errors.
func parseCosts(flags []string, shape string, units []string, bare bool) ([]costFlag, error) {
	var out []costFlag
	for _, f := range flags {
		unit, name, named := strings.Cut(f, "=")
		unit, name = strings.TrimSpace(unit), strings.TrimSpace(name)
		if !named && bare {
			name = unit
		}
		valid := (rule.Rule{Limit: 1, Window: time.Second, Unit: unit}).Validate() == nil
		if (!named && !bare) || unit == "" || name == "" || !valid {
			return nil, fmt.Errorf("--cost %q: want %s (a unit is a lower-case word: tokens, input_tokens)", f, shape)
		}
		if units != nil && !slices.Contains(units, unit) {
			return nil, fmt.Errorf("--cost %q: no rule meters %s (the rules meter %s)", f, unit, unitList(units))
		}
		if slices.ContainsFunc(out, func(c costFlag) bool { return c.unit == unit }) {
			return nil, fmt.Errorf("--cost %q: unit %s given twice", f, unit)
		}
		out = append(out, costFlag{f, unit, name})
	}
	return out, nil
}

func unitList(units []string) string {
	if len(units) == 0 {
		return "no unit: they count calls"
	}
	return strings.Join(units, ", ")
}

// CostColumns says where sql reads the cost of each unit the rules meter:
// the column a --cost UNIT=COLUMN flag names, else the column named as the
// unit, as check reads a CSV.
func CostColumns(rules []rule.Rule, costFlags []string) (map[string]string, error) {
	sources, err := CostSources(rules, costFlags)
	if err != nil {
		return nil, err
	}
	cols := map[string]string{}
	for _, s := range sources {
		cols[s.Unit] = s.Col
	}
	return cols, nil
}

// SettledFlags are where a log of reserved sends gives each send's actual
// cost per unit and the instant it became known; the costs --cost names
// are then the estimates charged from each send on.
type SettledFlags struct {
	actual     []string
	col, field string
}

// Add registers the flags on fs.
func (f *SettledFlags) Add(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.actual, "actual", nil, "read a unit's actual cost, known at the send's settlement, from this CSV column or JSON field: UNIT=NAME (--cost is then the estimate)")
	fs.StringVar(&f.col, "settled-col", "", "CSV column with the instant each send's actual cost became known (empty: never settled, the estimate stands)")
	fs.StringVar(&f.field, "settled-field", "", "JSON-lines field with the instant each send's actual cost became known, as --settled-col")
}

// FromContract takes the contract's settlement columns where the flags
// that set them were not given, and its actual costs for the units no
// --actual names: flags override the contract, as for --cost.
func (f *SettledFlags) FromContract(fs *pflag.FlagSet, c contract.Reading) {
	if !fs.Changed("settled-col") && c.SettledCol != "" {
		f.col = c.SettledCol
	}
	if !fs.Changed("settled-field") && c.SettledField != "" {
		f.field = c.SettledField
	}
	f.actual = ContractCosts(f.actual, contract.Reading{Costs: c.Actual})
}

// Apply adds the settlement the flags name to read, whose costs are set.
func (f *SettledFlags) Apply(read *sendlog.Options) error {
	read.SettledCol, read.SettledField = f.col, f.field
	for _, a := range f.actual {
		unit, name, ok := strings.Cut(a, "=")
		unit, name = strings.TrimSpace(unit), strings.TrimSpace(name)
		if !ok || unit == "" || name == "" {
			return fmt.Errorf("--actual %q: want UNIT=COLUMN, such as tokens=total_tokens", a)
		}
		k := slices.IndexFunc(read.Costs, func(c sendlog.CostSource) bool { return c.Unit == unit })
		if k < 0 {
			return fmt.Errorf("--actual %q: no rule meters %s", a, unit)
		}
		read.Costs[k].ActualCol, read.Costs[k].ActualField = name, name
	}
	if len(f.actual) > 0 && !read.HasSettled() {
		return errors.New("--actual needs the instant each send settled: give --settled-col or --settled-field")
	}
	return nil
}

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/infer"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/sendlog"
)

// InferFlags are the flags of rlcheck infer.
type InferFlags struct {
	Format                   Format // text or json
	All                      bool   // every window and kind, not only the contract
	read                     ReadFlags
	statusCol, statusField   string
	headerCols, headerFields map[string]string
	declared                 RuleFlags
	writeContract            string
	costs                    []string
	delay                    time.Duration
}

// Add registers the flags on fs.
func (o *InferFlags) Add(f *pflag.FlagSet) {
	o.read.AddLayout(f, "auto, csv or jsonl")
	f.StringVar(&o.statusCol, "status-col", "", "CSV column with each call's HTTP status (default status)")
	f.StringVar(&o.statusField, "status-field", "", "JSON-lines field with each call's HTTP status (default status)")
	f.StringToStringVar(&o.headerCols, "header-col", nil, "CSV column of a rate-limit header where it is not the default, as NAME=COLUMN (NAME: ratelimit, ratelimit_policy, x_ratelimit_limit, retry_after, ...; an empty COLUMN reads none)")
	f.StringToStringVar(&o.headerFields, "header-field", nil, "JSON-lines field of a rate-limit header where it is not the default, as NAME=FIELD")
	f.StringArrayVar(&o.costs, "cost", nil, "also infer cost rules of a unit, reading each call's cost from a CSV column or JSON field: UNIT=NAME, or UNIT for the column or field named as the unit")
	o.Format.Register(f, "text", "", "text", "json")
	f.BoolVar(&o.All, "all", false, "also show every window and kind: its least N, the refusals it explains and its cost")
	o.declared.Add(f)
	f.DurationVar(&o.delay, "delay", 0, "the log's instants are the client's: each call reached the provider up to this long after (e.g. 5ms); report the contract that fits within it, with every range that does")
	f.StringVar(&o.writeContract, "write-contract", "", "write the inferred contract to this contract file (YAML), for --contract")
	o.read.durationUnit = "s"
}

// Log validates the flags and reads the log at path ("-": stdin); it
// returns the log's name, its calls and the options of its inference.
func (o *InferFlags) Log(path string, stdin io.Reader) (string, *infer.Log, infer.Options, error) {
	var iopt infer.Options
	if _, err := o.Format.Resolve(); err != nil {
		return "", nil, iopt, err
	}
	if o.delay < 0 || o.delay > infer.MaxDelay {
		return "", nil, iopt, fmt.Errorf("--delay %s: want a delay from 0 to %s", o.delay, infer.MaxDelay)
	}
	iopt.Delay = o.delay
	opt, err := o.read.Options()
	if err != nil {
		return "", nil, iopt, err
	}
	if opt.Costs, err = inferCosts(o.costs); err != nil {
		return "", nil, iopt, err
	}
	var declared contract.Contract
	if o.declared.given() {
		if declared, err = o.declared.Load(); err != nil {
			return "", nil, iopt, err
		}
		opt.Costs = withDeclaredUnits(opt.Costs, declared.Rules)
	}
	open := func() (io.Reader, error) { return os.Open(path) }
	if path == "-" {
		// Read twice (the calls, then their rate-limit headers), so held in memory.
		data, err := io.ReadAll(stdin)
		if err != nil {
			return "", nil, iopt, err
		}
		path = "<stdin>"
		open = func() (io.Reader, error) { return bytes.NewReader(data), nil }
	}
	ro := infer.ReadOptions{Log: opt, StatusCol: o.statusCol, StatusField: o.statusField}
	if ro.HeaderCols, err = headerNames("--header-col", o.headerCols); err != nil {
		return "", nil, iopt, err
	}
	if ro.HeaderFields, err = headerNames("--header-field", o.headerFields); err != nil {
		return "", nil, iopt, err
	}
	log, err := infer.Read(path, open, ro)
	if errors.Is(err, infer.ErrNoStatus) {
		err = fmt.Errorf("%w (name the status with --status-col or --status-field)", err)
	}
	if err != nil {
		return "", nil, iopt, err
	}
	if o.declared.given() {
		c := declared
		if err := infer.CheckDeclared(c.Rules, log.Units); err != nil {
			var ue *infer.UnitError
			if errors.As(err, &ue) {
				err = fmt.Errorf("%w: read them with --cost %s (or --cost %s=COLUMN)", err, ue.Rule.Unit, ue.Rule.Unit)
			}
			return "", nil, iopt, err
		}
		iopt.Declared, iopt.Closed = c.Rules, c.Boundary == rule.Closed
	}
	return path, log, iopt, nil
}

// withDeclaredUnits adds to costs, for each unit a declared rule meters
// that no --cost names, the column or field named as the unit, as check
// reads it: a declared cost rule needs the calls' costs.
func withDeclaredUnits(costs []sendlog.CostSource, rules []rule.Rule) []sendlog.CostSource {
	for _, u := range rule.Units(rules) {
		if !slices.ContainsFunc(costs, func(c sendlog.CostSource) bool { return c.Unit == u }) && len(costs) < sendlog.MaxCosts {
			costs = append(costs, sendlog.CostSource{Unit: u, Col: u, Field: u})
		}
	}
	return costs
}

// inferCosts reads --cost: the units whose cost rules infer bounds, each
// read from the column or field named as the unit or as the flag names.
func inferCosts(flags []string) ([]sendlog.CostSource, error) {
	parsed, err := parseCosts(flags, "UNIT=NAME or UNIT, such as tokens=total_tokens", nil, true)
	if err != nil {
		return nil, err
	}
	if len(parsed) > sendlog.MaxCosts {
		return nil, fmt.Errorf("--cost: %d units; infer reads at most %d", len(parsed), sendlog.MaxCosts)
	}
	var out []sendlog.CostSource
	for _, c := range parsed {
		out = append(out, sendlog.CostSource{Unit: c.unit, Col: c.name, Field: c.name})
	}
	return out, nil
}

// headerNames reads --header-col or --header-field: a column or field
// per header, by the header's default column name.
func headerNames(flag string, m map[string]string) (map[infer.Header]string, error) {
	out := map[infer.Header]string{}
	for name, col := range m {
		h, ok := infer.HeaderByCol(strings.ToLower(name))
		if !ok {
			var names []string
			for h := range infer.NumHeaders {
				names = append(names, h.Col())
			}
			return nil, fmt.Errorf("%s %s=%s: no header %q; want one of %s", flag, name, col, name, strings.Join(names, ", "))
		}
		out[h] = col
	}
	return out, nil
}

// WriteContract writes the contract inferred from a log of one key to
// --write-contract (nothing when it is not given), with how the log was
// read and the reading of refused calls that fits, so that check
// --contract judges the same log as infer read it.
func (o *InferFlags) WriteContract(file string, sum *infer.Summary) error {
	if o.writeContract == "" {
		return nil
	}
	if sum.Only == nil {
		return fmt.Errorf("--write-contract: the log holds %d keys, each with its contract; infer one key at a time", sum.Keys)
	}
	res := sum.Only
	f, best, name := res.Fits[res.Best], res.Best, "inferred from "+file
	if t := res.Tolerance; t.WithinDelay() {
		// the answer within the delay given, not the exact fit
		f, best, name = t.Used().Fit, t.Best, fmt.Sprintf("inferred from %s within a %s delay", file, t.Delay)
	}
	if f.Fits && f.Broken > 0 {
		return fmt.Errorf("--write-contract: no contract to write (the rules found break %d accepted calls, the first on line %d)", f.Broken, f.BrokenLine)
	}
	if f.Fits && f.Missed > 0 {
		return fmt.Errorf("--write-contract: no contract to write (the rules found, as named, leave %d refused calls unexplained, the first on line %d)", f.Missed, f.MissedLine)
	}
	if res.Refused == 0 || !f.Fits {
		return fmt.Errorf("--write-contract: no contract to write (the log %s)", map[bool]string{true: "has no 429", false: "contradicts every contract on the grid"}[res.Refused == 0])
	}
	read := o.reading()
	read.Refused = best.Word()
	c := contract.Contract{Name: name, Read: read}
	for _, r := range f.Rules {
		c.Rules = append(c.Rules, r.Exact())
	}
	// Only the costs of units the rules meter: a contract names no other.
	c.Read.Costs = slices.DeleteFunc(c.Read.Costs, func(cost contract.Cost) bool {
		return !slices.Contains(rule.Units(c.Rules), cost.Unit)
	})
	return os.WriteFile(o.writeContract, c.YAML(), 0o644)
}

// reading is how infer read its log, in a contract's words.
func (o *InferFlags) reading() contract.Reading {
	r := contract.Reading{TimeCol: o.read.timeCol, TimeField: o.read.timeField, KeyCol: o.read.keyCol, KeyField: o.read.keyField,
		Zone: o.read.zone, StatusCol: o.statusCol, StatusField: o.statusField}
	if o.read.unit != "auto" {
		r.Unit = o.read.unit
	}
	if r.StatusCol == "" && r.StatusField == "" {
		r.StatusCol, r.StatusField = "status", "status" // infer's default, in either layout
	}
	costs, _ := inferCosts(o.costs) // already read without error
	for _, c := range costs {
		r.Costs = append(r.Costs, contract.Cost{Unit: c.Unit, Name: c.Col})
	}
	return r
}

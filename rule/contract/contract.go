package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rlcheck/rlcheck/rule"
	"go.yaml.in/yaml/v3"
)

// Contract is what a contract file promises.
type Contract struct {
	Name  string
	Rules []rule.Rule
	// MaxInFlight caps the calls in flight at once; 0 means no cap.
	MaxInFlight int
	Boundary    rule.Boundary
	// Read says how a log of the sends is read, so that the contract file
	// holds the whole setup; a command's flags override it.
	Read Reading
}

// Reading is where a log holds what a check needs, as the reading flags of
// `rlcheck check` name it; "" leaves each to its default.
type Reading struct {
	TimeCol, TimeField string
	Unit               string // of numeric timestamps: s, ms, us, ns
	KeyCol, KeyField   string
	Zone               string // of times written without one
	// StatusCol and StatusField name the column or field of each call's
	// HTTP status, and Refused ("count" or "free") whether calls refused
	// with a 429 count toward later windows (rule.ParseRefusals).
	StatusCol, StatusField, Refused string
	// SettledCol and SettledField name the column or field of the instant
	// each send's actual cost became known, and Actual, per unit, where
	// that actual cost is; the costs of Costs are then the estimates.
	SettledCol, SettledField string
	Actual                   []Cost
	// Costs names, per unit a rule meters, the column or field holding
	// each send's cost, in the file's order.
	Costs []Cost
}

// Cost is where one unit's costs are.
type Cost struct{ Unit, Name string }

// Error is a contract file that cannot be used, at a known place.
type Error struct {
	File string
	Line int // 1-based; 0 when the error concerns the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// fields names the keys a contract file may hold, in the order they are
// documented.
const fields = "name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field"

// file is the layout of a contract file; yaml.Node fields keep each value's
// line for error messages.
type file struct {
	Name        yaml.Node `yaml:"name"`
	Rules       yaml.Node `yaml:"rules"`
	MaxInFlight yaml.Node `yaml:"max_in_flight"`
	Boundary    yaml.Node `yaml:"boundary"`
	TimeCol     yaml.Node `yaml:"time_col"`
	TimeField   yaml.Node `yaml:"time_field"`
	Unit        yaml.Node `yaml:"unit"`
	KeyCol      yaml.Node `yaml:"key_col"`
	KeyField    yaml.Node `yaml:"key_field"`
	Zone        yaml.Node `yaml:"tz"`
	StatusCol   yaml.Node `yaml:"status_col"`
	StatusField yaml.Node `yaml:"status_field"`
	Refused     yaml.Node `yaml:"refused"`
	Costs       yaml.Node `yaml:"costs"`
	Actual      yaml.Node `yaml:"actual"`
	SettledCol  yaml.Node `yaml:"settled_col"`
	SettledFld  yaml.Node `yaml:"settled_field"`
}

// MaxSize is the largest contract file Load reads, in bytes: a contract is
// a few lines, and a larger file is a wrong path (a log, a device).
const MaxSize = 1 << 20

// Load reads the contract file at path.
func Load(path string) (Contract, error) {
	f, err := os.Open(path)
	if err != nil {
		return Contract{}, fmt.Errorf("contract: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return Contract{}, fmt.Errorf("contract: %w", err)
	}
	if len(data) > MaxSize {
		return Contract{}, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes (1 MiB): a contract file is a few lines of YAML", MaxSize)}
	}
	return Parse(path, data)
}

// Parse reads a contract from data; name is the file name used in errors.
func Parse(name string, data []byte) (Contract, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Contract{}, &Error{File: name, Msg: "empty contract: want " + fields}
		}
		return Contract{}, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return Contract{}, yamlError(name, err)
		}
		return Contract{}, &Error{File: name, Line: line, Msg: "a second YAML document: a contract file holds one"}
	}
	return f.contract(name)
}

func (f *file) contract(name string) (Contract, error) {
	var c Contract
	fail := func(n *yaml.Node, format string, args ...any) (Contract, error) {
		return Contract{}, &Error{File: name, Line: n.Line, Msg: fmt.Sprintf(format, args...)}
	}
	if set(&f.Name) {
		if f.Name.Kind != yaml.ScalarNode {
			return fail(&f.Name, "name: want a string")
		}
		c.Name = f.Name.Value
	}
	if set(&f.Rules) {
		var items []*yaml.Node
		switch f.Rules.Kind {
		case yaml.SequenceNode:
			items = f.Rules.Content
		case yaml.ScalarNode:
			items = []*yaml.Node{&f.Rules}
		default:
			return fail(&f.Rules, "rules: want a list such as [10/s, 500/min]")
		}
		seen := map[rule.Rule]int{}
		for i, n := range items {
			if n.Kind != yaml.ScalarNode {
				return fail(n, "rules[%d]: want a rule such as 10/s", i)
			}
			rs, err := rule.ParseList(n.Value)
			if err != nil {
				return fail(n, "rules[%d]: %v", i, err)
			}
			for _, r := range rs {
				// The bookkeeping never changes the contract: 10/s and
				// 10/s:exact are the same rule listed twice.
				if line, dup := seen[r.Contract()]; dup {
					return fail(n, "rules[%d]: %s is already listed at line %d", i, r, line)
				}
				seen[r.Contract()] = n.Line
				c.Rules = append(c.Rules, r)
			}
		}
	}
	if set(&f.MaxInFlight) {
		n := &f.MaxInFlight
		v, err := strconv.Atoi(n.Value)
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || err != nil || v <= 0 {
			return fail(n, "max_in_flight: want a whole number above 0, got %q", n.Value)
		}
		c.MaxInFlight = v
	}
	if set(&f.Boundary) {
		n := &f.Boundary
		b, err := rule.ParseBoundary(n.Value)
		if n.Kind != yaml.ScalarNode || n.Value == "" || err != nil {
			return fail(n, "boundary: want half-open or closed, got %q", n.Value)
		}
		c.Boundary = b
	}
	if err := f.reading(name, &c); err != nil {
		return Contract{}, err
	}
	if len(c.Rules) == 0 && c.MaxInFlight == 0 {
		return Contract{}, &Error{File: name, Msg: "no rules and no max_in_flight: a contract needs at least one"}
	}
	return c, nil
}

// reading reads the fields that say how a log is read; each value is
// checked where it is used, as the flag's would be.
func (f *file) reading(name string, c *Contract) error {
	for _, s := range []struct {
		n   *yaml.Node
		key string
		to  *string
	}{
		{&f.TimeCol, "time_col", &c.Read.TimeCol}, {&f.TimeField, "time_field", &c.Read.TimeField},
		{&f.Unit, "unit", &c.Read.Unit}, {&f.KeyCol, "key_col", &c.Read.KeyCol},
		{&f.KeyField, "key_field", &c.Read.KeyField}, {&f.Zone, "tz", &c.Read.Zone},
		{&f.StatusCol, "status_col", &c.Read.StatusCol}, {&f.StatusField, "status_field", &c.Read.StatusField},
		{&f.Refused, "refused", &c.Read.Refused},
		{&f.SettledCol, "settled_col", &c.Read.SettledCol}, {&f.SettledFld, "settled_field", &c.Read.SettledField},
	} {
		if !set(s.n) {
			continue
		}
		if s.n.Kind != yaml.ScalarNode || s.n.Value == "" {
			return &Error{File: name, Line: s.n.Line, Msg: s.key + ": want a name"}
		}
		*s.to = s.n.Value
	}
	if set(&f.Refused) {
		if _, err := rule.ParseRefusals(f.Refused.Value); err != nil {
			return &Error{File: name, Line: f.Refused.Line, Msg: "refused: want count (refused calls count toward later windows) or free (they take nothing), got " + strconv.Quote(f.Refused.Value)}
		}
	}
	var err error
	if c.Read.Costs, err = unitColumns(name, &f.Costs, "costs", c.Rules); err != nil {
		return err
	}
	if c.Read.Actual, err = unitColumns(name, &f.Actual, "actual", c.Rules); err != nil {
		return err
	}
	if len(c.Read.Actual) > 0 && c.Read.SettledCol == "" && c.Read.SettledField == "" {
		return &Error{File: name, Line: f.Actual.Line, Msg: "actual: needs the instant each send settled: give settled_col or settled_field"}
	}
	return nil
}

// unitColumns reads a mapping of unit to column or field (costs, actual),
// each unit one the rules meter.
func unitColumns(name string, n *yaml.Node, key string, rules []rule.Rule) ([]Cost, error) {
	if !set(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: n.Line, Msg: key + ": want a mapping of unit to column or field, such as {tokens: total_tokens}"}
	}
	var out []Cost
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind != yaml.ScalarNode || v.Value == "" || !slices.ContainsFunc(rules, func(r rule.Rule) bool { return r.Unit == k.Value }) {
			return nil, &Error{File: name, Line: k.Line, Msg: fmt.Sprintf("%s: %s: want a column or field for a unit the rules meter", key, k.Value)}
		}
		out = append(out, Cost{Unit: k.Value, Name: v.Value})
	}
	return out, nil
}

// set reports whether a field was given a value other than null.
func set(n *yaml.Node) bool {
	return n.Kind != 0 && !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

var (
	lineRe    = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRe = regexp.MustCompile(`^field (.*) not found in type \S+$`)
	twiceRe   = regexp.MustCompile(`^mapping key (".*") already defined at line (\d+)$`)
)

// yamlError turns the YAML decoder's messages into errors that name the file
// and line, in the words of a contract file.
func yamlError(name string, err error) error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var errs []error
	for _, m := range msgs {
		e := &Error{File: name, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sub := lineRe.FindStringSubmatch(m); sub != nil {
			e.Line, _ = strconv.Atoi(sub[1])
			e.Msg = sub[2]
		}
		if sub := unknownRe.FindStringSubmatch(e.Msg); sub != nil {
			e.Msg = fmt.Sprintf("unknown field %q: want %s", sub[1], fields)
		} else if sub := twiceRe.FindStringSubmatch(e.Msg); sub != nil {
			e.Msg = fmt.Sprintf("field %s given twice (first at line %s)", sub[1], sub[2])
		} else if strings.HasPrefix(e.Msg, "cannot unmarshal") {
			e.Msg = "want a mapping of " + fields
		}
		errs = append(errs, e)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// YAML writes c as a contract file that Parse reads back to c.
func (c Contract) YAML() []byte {
	var b bytes.Buffer
	if c.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", strconv.Quote(c.Name))
	}
	if len(c.Rules) > 0 {
		b.WriteString("rules: [")
		for i, r := range c.Rules {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.String())
		}
		b.WriteString("]\n")
	}
	if c.MaxInFlight > 0 {
		fmt.Fprintf(&b, "max_in_flight: %d\n", c.MaxInFlight)
	}
	fmt.Fprintf(&b, "boundary: %s\n", c.Boundary)
	r := c.Read
	for _, kv := range [][2]string{{"time_col", r.TimeCol}, {"time_field", r.TimeField}, {"unit", r.Unit},
		{"key_col", r.KeyCol}, {"key_field", r.KeyField}, {"tz", r.Zone},
		{"status_col", r.StatusCol}, {"status_field", r.StatusField},
		{"settled_col", r.SettledCol}, {"settled_field", r.SettledField}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], strconv.Quote(kv[1]))
		}
	}
	if r.Refused != "" {
		fmt.Fprintf(&b, "refused: %s\n", r.Refused)
	}
	for _, m := range []struct {
		key   string
		costs []Cost
	}{{"costs", r.Costs}, {"actual", r.Actual}} {
		if len(m.costs) > 0 {
			b.WriteString(m.key + ":\n")
			for _, cost := range m.costs {
				fmt.Fprintf(&b, "  %s: %s\n", cost.Unit, strconv.Quote(cost.Name))
			}
		}
	}
	return b.Bytes()
}

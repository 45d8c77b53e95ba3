package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/strategies/catalog"
	"github.com/rlcheck/rlcheck/workload"
	"go.yaml.in/yaml/v3"
)

//go:embed *.yaml
var shipped embed.FS

// Error is a problem in a scenario file, at a line when one is known.
type Error struct {
	File string
	Line int // 0 when unknown
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// file is the YAML layout. Values whose errors should name their line are
// kept as nodes and converted by hand.
type file struct {
	Name         string      `yaml:"name"`
	Description  string      `yaml:"description"`
	Rules        []yaml.Node `yaml:"rules"`
	Boundary     yaml.Node   `yaml:"boundary"`
	Strategies   []string    `yaml:"strategies"`
	Callers      yaml.Node   `yaml:"callers"`
	Workers      int         `yaml:"workers"`
	MaxInFlight  int         `yaml:"max_in_flight"`
	Arrivals     arrivals    `yaml:"arrivals"`
	CallDuration yaml.Node   `yaml:"call_duration"`
	Lateness     yaml.Node   `yaml:"lateness"`
	OpCost       yaml.Node   `yaml:"op_cost"`
	Skew         []yaml.Node `yaml:"skew"`
	Timeout      yaml.Node   `yaml:"timeout"`
	Seed         uint64      `yaml:"seed"`
	SendDelay    yaml.Node   `yaml:"send_delay"`
	RedisRTT     yaml.Node   `yaml:"redis_rtt"`
	Margin       yaml.Node   `yaml:"margin"`
	Costs        yaml.Node   `yaml:"costs"`
	ActualCosts  yaml.Node   `yaml:"actual_costs"`
}

type arrivals struct {
	Pattern yaml.Node `yaml:"pattern"`
	Start   yaml.Node `yaml:"start"`
	Every   yaml.Node `yaml:"every"`
	Rate    float64   `yaml:"rate"`
	File    yaml.Node `yaml:"file"`
}

// Scenario is a loaded scenario with its description.
type Scenario struct {
	workload.Scenario
	Description string
	// Path is where it was read from ("seed.yaml" for a shipped one).
	Path string
}

// Names returns the shipped scenarios' names, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(shipped, ".")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Shipped loads a shipped scenario by name ("seed").
func Shipped(name string) (*Scenario, error) {
	path := strings.TrimSuffix(name, ".yaml") + ".yaml"
	data, err := shipped.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("no shipped scenario %q (shipped: %s)", name, strings.Join(Names(), ", "))}
	}
	return Parse(path, data, func(p string) (io.ReadCloser, error) { return shipped.Open(p) })
}

// MaxFileBytes caps a scenario file: a scenario is a few dozen lines, and a
// larger file is a mistake (a send log given as a scenario, say).
const MaxFileBytes = 1 << 20

// Load reads a scenario file; a replayed log is found relative to it. A
// name with no file behind it and no directory part ("seed") falls back to
// the shipped scenario of that name.
func Load(path string) (*Scenario, error) {
	data, err := readCapped(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(path, `/\`) {
			if _, ok := shippedName(path); ok {
				return Shipped(path)
			}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	dir := filepath.Dir(path)
	return Parse(path, data, func(p string) (io.ReadCloser, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		return os.Open(p)
	})
}

// readCapped reads path, refusing to read more than MaxFileBytes+1 bytes.
func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

func shippedName(path string) (string, bool) {
	name := strings.TrimSuffix(path, ".yaml")
	for _, n := range Names() {
		if n == name {
			return n, true
		}
	}
	return "", false
}

var fieldNotFound = regexp.MustCompile(`^line (\d+): field (\S+) not found in type`)
var lineMsg = regexp.MustCompile(`^line (\d+): (.*)$`)

// Parse decodes a scenario; name is used in errors and open reads a
// replayed log.
func Parse(name string, data []byte, open func(string) (io.ReadCloser, error)) (*Scenario, error) {
	f, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	c := conv{file: name, open: open}
	s := &Scenario{Description: strings.TrimSpace(f.Description), Path: name}
	sc := &s.Scenario
	sc.Name = f.Name
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	if err := c.rules(f, sc); err != nil {
		return nil, err
	}
	if err := c.costs(f, sc); err != nil {
		return nil, err
	}
	sc.Strategies = f.Strategies
	if f.Callers.Kind != 0 {
		if err := f.Callers.Decode(&sc.Callers); err != nil {
			return nil, c.errf(&f.Callers, "callers: want a whole number")
		}
	}
	sc.Workers = f.Workers
	if sc.Workers == 0 {
		sc.Workers = 1
	}
	sc.MaxInFlight = f.MaxInFlight
	sc.Seed = f.Seed
	if err := c.runtime(f, sc); err != nil {
		return nil, err
	}
	if err := c.arrivals(&f.Arrivals, sc, open); err != nil {
		return nil, err
	}
	if sc.Arrivals.Kind == workload.Replay && f.Callers.Kind != 0 {
		return nil, c.errf(&f.Callers, "callers: a replayed log sets the callers (one per line); remove callers")
	}
	if len(sc.Skew) > 0 && len(sc.Skew) != sc.Workers {
		return nil, c.errf(&f.Skew[0], "skew: %d offsets for %d workers; give one per worker", len(sc.Skew), sc.Workers)
	}
	if len(sc.SendDelay) > 1 && len(sc.SendDelay) != sc.Workers {
		return nil, c.errf(&f.SendDelay, "send_delay: %d distributions for %d workers; give one, or one per worker", len(sc.SendDelay), sc.Workers)
	}
	if err := catalog.Validate(sc); err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	return s, nil
}

// decode reads the one YAML document of a scenario file, strictly.
func decode(name string, data []byte) (*file, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: name, Msg: fmt.Sprintf("larger than %d KiB: a scenario file is a short YAML description", MaxFileBytes>>10)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Msg: "a second YAML document; a scenario file holds one"}
	}
	return &f, nil
}

// rules sets the rules and their boundary.
func (c conv) rules(f *file, sc *workload.Scenario) error {
	for i := range f.Rules {
		n := &f.Rules[i]
		r, err := rule.Parse(n.Value)
		if err != nil || n.Kind != yaml.ScalarNode {
			return c.errf(n, "rules: %v", errOr(err, "want a rule such as 5/1s"))
		}
		sc.Rules = append(sc.Rules, r)
	}
	if f.Boundary.Kind != 0 {
		b, err := rule.ParseBoundary(f.Boundary.Value)
		if err != nil {
			return c.errf(&f.Boundary, "%v", err)
		}
		sc.Boundary = b
	}
	return nil
}

// costs sets each call's cost per unit from the costs mapping (unit:
// distribution), in the order the rules first name the units: every unit
// a rule meters needs one, and a unit no rule meters is refused. An
// actual_costs mapping, when given, makes them estimates and needs the
// same units.
func (c conv) costs(f *file, sc *workload.Scenario) error {
	byUnit, err := c.unitDists(&f.Costs, "costs", sc.Rules)
	if err != nil {
		return err
	}
	actual, err := c.unitDists(&f.ActualCosts, "actual_costs", sc.Rules)
	if err != nil {
		return err
	}
	if f.ActualCosts.Kind != 0 && f.Costs.Kind == 0 {
		return c.errf(&f.ActualCosts, "actual_costs: the estimates they settle go in costs, which is missing")
	}
	for i, r := range sc.Rules {
		if r.Unit == "" || slices.ContainsFunc(sc.Costs, func(u workload.UnitCost) bool { return u.Unit == r.Unit }) {
			continue
		}
		d, ok := byUnit[r.Unit]
		if !ok {
			return c.errf(&f.Rules[i], "rules: %s meters %s, but costs gives no %s cost per call", r, r.Unit, r.Unit)
		}
		sc.Costs = append(sc.Costs, workload.UnitCost{Unit: r.Unit, Dist: d})
		if f.ActualCosts.Kind == 0 {
			continue
		}
		a, ok := actual[r.Unit]
		if !ok {
			return c.errf(&f.ActualCosts, "actual_costs: no actual %s cost per call (rule %s meters it)", r.Unit, r)
		}
		sc.Actual = append(sc.Actual, workload.UnitCost{Unit: r.Unit, Dist: a})
	}
	return nil
}

// unitDists reads a mapping of unit to cost distribution under key name;
// every unit must be one a rule meters.
func (c conv) unitDists(n *yaml.Node, name string, rules []rule.Rule) (map[string]workload.Dist, error) {
	byUnit := map[string]workload.Dist{}
	if n.Kind == 0 {
		return byUnit, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, c.errf(n, "%s: want a unit for each cost, such as {tokens: lognormal(800, 0.7)}", name)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.ContainsFunc(rules, func(r rule.Rule) bool { return r.Unit == k.Value }) {
			return nil, c.errf(k, "%s: no rule meters %s (a rule such as 90000 %s/1m would)", name, k.Value, k.Value)
		}
		if v.Kind != yaml.ScalarNode {
			return nil, c.errf(v, "%s: %s: want a cost or a distribution such as lognormal(800, 0.7)", name, k.Value)
		}
		d, err := workload.ParseCostDistFiles(v.Value, c.open)
		if err != nil {
			return nil, c.errf(v, "%s: %s: %v", name, k.Value, err)
		}
		byUnit[k.Value] = d
	}
	return byUnit, nil
}

// runtime sets the durations and distributions of the runtime model and
// the send path, in the file's field order.
func (c conv) runtime(f *file, sc *workload.Scenario) error {
	var err error
	if sc.CallDuration, err = c.dist(&f.CallDuration, "call_duration"); err != nil {
		return err
	}
	if sc.Lateness, err = c.dist(&f.Lateness, "lateness"); err != nil {
		return err
	}
	if sc.OpCost, err = c.dist(&f.OpCost, "op_cost"); err != nil {
		return err
	}
	for i := range f.Skew {
		d, err := c.signedDur(&f.Skew[i], "skew")
		if err != nil {
			return err
		}
		sc.Skew = append(sc.Skew, d)
	}
	if sc.Timeout, err = c.dur(&f.Timeout, "timeout"); err != nil {
		return err
	}
	if sc.SendDelay, err = c.dists(&f.SendDelay, "send_delay"); err != nil {
		return err
	}
	if sc.RedisRTT, err = c.dist(&f.RedisRTT, "redis_rtt"); err != nil {
		return err
	}
	sc.Margin, err = c.dur(&f.Margin, "margin")
	return err
}

func errOr(err error, msg string) any {
	if err != nil {
		return err
	}
	return msg
}

func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		first := te.Errors[0]
		if m := fieldNotFound.FindStringSubmatch(first); m != nil {
			line, _ := strconv.Atoi(m[1])
			return &Error{File: name, Line: line, Msg: fmt.Sprintf("unknown field %q", m[2])}
		}
		if m := lineMsg.FindStringSubmatch(first); m != nil {
			line, _ := strconv.Atoi(m[1])
			return &Error{File: name, Line: line, Msg: m[2]}
		}
	}
	if errors.Is(err, io.EOF) {
		return &Error{File: name, Msg: "empty scenario"}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineMsg.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Msg: m[2]}
	}
	return &Error{File: name, Msg: msg}
}

// conv turns nodes into values, with errors at their line.
type conv struct {
	file string
	open func(string) (io.ReadCloser, error) // files named by the scenario
}

func (c conv) errf(n *yaml.Node, format string, a ...any) error {
	return &Error{File: c.file, Line: n.Line, Msg: fmt.Sprintf(format, a...)}
}

func (c conv) dist(n *yaml.Node, field string) (workload.Dist, error) {
	if n.Kind == 0 {
		return workload.Dist{}, nil
	}
	if n.Kind != yaml.ScalarNode {
		return workload.Dist{}, c.errf(n, "%s: want a duration or a distribution such as uniform(100us, 3ms)", field)
	}
	d, err := workload.ParseDistFiles(n.Value, c.open)
	if err != nil {
		return workload.Dist{}, c.errf(n, "%s: %v", field, err)
	}
	return d, nil
}

// dists reads one distribution or a list of them.
func (c conv) dists(n *yaml.Node, field string) ([]workload.Dist, error) {
	nodes := []*yaml.Node{n}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		nodes = n.Content
	}
	var out []workload.Dist
	for _, e := range nodes {
		d, err := c.dist(e, field)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (c conv) dur(n *yaml.Node, field string) (time.Duration, error) {
	d, err := c.signedDur(n, field)
	if err == nil && d < 0 {
		return 0, c.errf(n, "%s: must not be negative", field)
	}
	return d, err
}

func (c conv) signedDur(n *yaml.Node, field string) (time.Duration, error) {
	if n.Kind == 0 {
		return 0, nil
	}
	if n.Kind != yaml.ScalarNode {
		return 0, c.errf(n, "%s: want a duration such as 250ms", field)
	}
	if n.Value == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil {
		return 0, c.errf(n, "%s: %q is not a duration such as 250ms", field, n.Value)
	}
	return d, nil
}

// start reads arrivals.start: a duration from simulated time 0, which is
// the Unix epoch, or a wall-clock instant with its zone (RFC 3339,
// 2026-03-10T20:00:00Z), from 1970 to 2262.
func (c conv) start(n *yaml.Node) (time.Duration, bool, error) {
	if n.Kind == yaml.ScalarNode && strings.ContainsAny(n.Value, "T-:") && !strings.HasPrefix(n.Value, "-") {
		t, err := time.Parse(time.RFC3339Nano, n.Value)
		if _, local := time.Parse("2006-01-02T15:04:05.999999999", n.Value); err != nil && local == nil {
			return 0, false, c.errf(n, "arrivals.start: %s has no zone: write Z for UTC (%sZ) or its offset (+01:00)", n.Value, n.Value)
		}
		if err != nil {
			return 0, false, c.errf(n, "arrivals.start: %q is neither a duration such as 20h nor an instant such as 2026-03-10T20:00:00Z", n.Value)
		}
		if t.Before(time.Unix(0, 0)) || t.After(time.Unix(0, math.MaxInt64)) {
			return 0, false, c.errf(n, "arrivals.start: %s is outside 1970 to 2262, the instants a run can hold", n.Value)
		}
		return time.Duration(t.UnixNano()), true, nil
	}
	d, err := c.dur(n, "arrivals.start")
	return d, false, err
}

func (c conv) arrivals(a *arrivals, sc *workload.Scenario, open func(string) (io.ReadCloser, error)) error {
	kind := workload.ArrivalKind(a.Pattern.Value)
	if a.Pattern.Kind == 0 {
		kind = workload.AllAtOnce
	}
	switch kind {
	case workload.AllAtOnce, workload.Interval, workload.Poisson, workload.Replay:
	default:
		return c.errf(&a.Pattern, "arrivals: unknown pattern %q (want all-at-once, interval, poisson or replay)", a.Pattern.Value)
	}
	sc.Arrivals.Kind = kind
	var err error
	if sc.Arrivals.Start, sc.Arrivals.Wall, err = c.start(&a.Start); err != nil {
		return err
	}
	if sc.Arrivals.Every, err = c.dur(&a.Every, "arrivals.every"); err != nil {
		return err
	}
	sc.Arrivals.Rate = a.Rate
	if kind == workload.Replay {
		if a.File.Value == "" {
			return c.errf(&a.Pattern, "arrivals: replay needs a file")
		}
		rc, err := open(a.File.Value)
		if err != nil {
			return c.errf(&a.File, "arrivals.file: %v", err)
		}
		defer rc.Close()
		times, err := ReadTimes(a.File.Value, rc)
		if err != nil {
			return err
		}
		sc.Arrivals.Times = times
	}
	return nil
}

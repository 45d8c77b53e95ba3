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
	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// ReadFlags are the flags that say how check reads a send log: its layout,
// where the time, key and end of each call are, units, access-log filters.
type ReadFlags struct {
	format, timeCol, timeField, keyCol, keyField string
	endCol, endField, durationCol, durationField string
	durationUnit, unit, zone                     string
	statusCol, statusField, refused              string
	paths, methods, statuses                     []string
	skipInvalid                                  bool
}

// Add registers the flags on fs.
func (f *ReadFlags) Add(fs *pflag.FlagSet) {
	f.AddLayout(fs, "auto, plain, csv, jsonl, nginx or apache")
	fs.StringSliceVar(&f.paths, "path", nil, "access logs: keep requests whose path has this prefix or matches this glob (repeatable)")
	fs.StringSliceVar(&f.methods, "method", nil, "access logs: keep requests with these methods (GET,POST)")
	fs.StringSliceVar(&f.statuses, "status", nil, "access logs, or logs with --status-col or --status-field: keep calls with these statuses (200, 2xx, 429)")
	fs.StringVar(&f.endCol, "end-col", "", "CSV column with each call's end time (for --max-in-flight)")
	fs.StringVar(&f.endField, "end-field", "", "JSON-lines field with each call's end time")
	fs.StringVar(&f.durationCol, "duration-col", "", "CSV column with each call's duration (for --max-in-flight)")
	fs.StringVar(&f.durationField, "duration-field", "", "JSON-lines field with each call's duration")
	fs.StringVar(&f.durationUnit, "duration-unit", "s", "unit of plain-number durations: s, ms, us or ns (\"150ms\" carries its own)")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "skip and count bad lines instead of failing")
}

// AddLayout registers the flags every command that reads a log takes,
// with one help text each: the layout (one of formats), where the time
// and the key are, the unit of numeric times and the zone of times
// written without one. TestReadLayoutFlagsAgree holds every command to
// them.
func (f *ReadFlags) AddLayout(fs *pflag.FlagSet, formats string) {
	fs.StringVar(&f.format, "input-format", "auto", "input layout: "+formats)
	fs.StringVar(&f.timeCol, "time-col", "", "CSV time column: a header name or a 1-based index (default ts, time, timestamp, sent_at or created_at, perhaps ending in _s, _ms, _us or _ns, else the first)")
	fs.StringVar(&f.timeField, "time-field", "", "JSON-lines time field, dotted for nesting (default the names --time-col takes)")
	fs.StringVar(&f.keyCol, "key-col", "", "CSV column that splits the log per key (tenant, API key)")
	fs.StringVar(&f.keyField, "key-field", "", "JSON-lines field that splits the log per key")
	fs.StringVar(&f.unit, "unit", "auto", "unit of numeric timestamps: auto, s, ms, us or ns")
	f.AddZone(fs)
	if f.durationUnit == "" {
		f.durationUnit = "s"
	}
}

// AddStatus registers the flags that judge a log by each call's HTTP
// status: where it is, and whether refused calls count.
func (f *ReadFlags) AddStatus(fs *pflag.FlagSet) {
	fs.StringVar(&f.statusCol, "status-col", "", "CSV column with each call's HTTP status: 2xx calls are judged, 429s are not (see --refused), others left out")
	fs.StringVar(&f.statusField, "status-field", "", "JSON-lines field with each call's HTTP status, as --status-col")
	fs.StringVar(&f.refused, "refused", "count", "with a status: count (refused calls count toward later windows) or free (they take nothing)")
}

// Refusals returns the reading --refused gives.
func (f *ReadFlags) Refusals() (rule.Refusals, error) {
	r, err := rule.ParseRefusals(f.refused)
	if err != nil {
		return r, fmt.Errorf("--refused %q: want count (refused calls count toward later windows) or free (they take nothing)", f.refused)
	}
	return r, nil
}

// FromContract takes the reading settings of contract file c where the
// flag that sets each was not given: flags override the contract.
func (f *ReadFlags) FromContract(fs *pflag.FlagSet, c contract.Reading) {
	for _, s := range []struct {
		flag string
		to   *string
		v    string
	}{
		{"time-col", &f.timeCol, c.TimeCol}, {"time-field", &f.timeField, c.TimeField}, {"unit", &f.unit, c.Unit},
		{"key-col", &f.keyCol, c.KeyCol}, {"key-field", &f.keyField, c.KeyField}, {"tz", &f.zone, c.Zone},
		{"status-col", &f.statusCol, c.StatusCol}, {"status-field", &f.statusField, c.StatusField}, {"refused", &f.refused, c.Refused},
	} {
		if s.v != "" && !fs.Changed(s.flag) {
			*s.to = s.v
		}
	}
}

// ContractCosts adds to --cost flags the contract's costs for the units
// they do not name: a --cost for a unit overrides the contract's.
func ContractCosts(flags []string, c contract.Reading) []string {
	out := slices.Clone(flags)
	for _, cost := range c.Costs {
		if !slices.ContainsFunc(flags, func(f string) bool { u, _, _ := strings.Cut(f, "="); return strings.TrimSpace(u) == cost.Unit }) {
			out = append(out, cost.Unit+"="+cost.Name)
		}
	}
	return out
}

// AddZone registers --tz, for commands that register the other reading
// flags themselves.
func (f *ReadFlags) AddZone(fs *pflag.FlagSet) {
	fs.StringVar(&f.zone, "tz", "", "time zone of times written without one (2026-03-10 20:02:24): UTC, or an IANA name such as Europe/Berlin")
}

// Options returns the reading options the flags give, or what is wrong
// with them.
func (f *ReadFlags) Options() (sendlog.Options, error) {
	inFmt, err := sendlog.ParseFormat(f.format)
	if err != nil {
		return sendlog.Options{}, err
	}
	unit, err := sendlog.ParseUnit(f.unit)
	if err != nil {
		return sendlog.Options{}, err
	}
	var zone *time.Location
	if f.zone != "" {
		if zone, err = time.LoadLocation(f.zone); err != nil || f.zone == "Local" {
			return sendlog.Options{}, fmt.Errorf("--tz %q: want UTC or an IANA time zone name such as Europe/Berlin", f.zone)
		}
	}
	durUnit, err := sendlog.ParseUnit(f.durationUnit)
	if err != nil || durUnit == sendlog.UnitAuto {
		return sendlog.Options{}, fmt.Errorf("--duration-unit %q: want s, ms, us or ns", f.durationUnit)
	}
	var filter *accesslog.Filter
	if len(f.paths)+len(f.methods)+len(f.statuses) > 0 {
		withStatus := f.statusCol+f.statusField != "" && len(f.paths)+len(f.methods) == 0
		if inFmt != sendlog.FormatNginx && inFmt != sendlog.FormatApache && !withStatus {
			return sendlog.Options{}, errors.New("--path, --method and --status filter access logs: give --input-format nginx or apache (--status also filters a log with --status-col or --status-field)")
		}
		if filter, err = accesslog.NewFilter(accesslog.FilterSpec{Paths: f.paths, Methods: f.methods, Statuses: f.statuses}); err != nil {
			return sendlog.Options{}, err
		}
	}
	return sendlog.Options{
		AccessFilter: filter,
		Format:       inFmt, TimeCol: f.timeCol, TimeField: f.timeField,
		KeyCol: f.keyCol, KeyField: f.keyField,
		EndCol: f.endCol, EndField: f.endField,
		DurationCol: f.durationCol, DurationField: f.durationField, DurationUnit: durUnit,
		StatusCol: f.statusCol, StatusField: f.statusField,
		Unit: unit, SkipInvalid: f.skipInvalid, Zone: zone,
	}, nil
}

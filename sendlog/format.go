package sendlog

import (
	"fmt"
	"math"
	"time"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

// Format is a send-log layout.
type Format int

const (
	FormatAuto   Format = iota // by file extension, else by the first line
	FormatPlain                // one timestamp a line; blank and # lines skipped
	FormatCSV                  // comma-separated, usually with a header
	FormatJSONL                // one JSON object a line
	FormatNginx                // nginx access log with $msec $request_time (see package accesslog)
	FormatApache               // Apache access log with %{msec}t %D
)

var formatNames = [...]string{"auto", "plain", "csv", "jsonl", "nginx", "apache"}

func (f Format) String() string { return formatNames[f] }

// ParseFormat reads auto, plain, csv, jsonl, nginx or apache.
func ParseFormat(s string) (Format, error) {
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	if s == "ndjson" || s == "json" {
		return FormatJSONL, nil
	}
	return 0, fmt.Errorf("input format %q: want auto, plain, csv, jsonl, nginx or apache", s)
}

// MaxLine is the longest line a reader accepts, in bytes.
const MaxLine = 1 << 20

// Options says how to read a log.
type Options struct {
	Format Format
	// TimeCol is the CSV time column: a header name, or a 1-based index.
	// Empty picks a column named ts, time, timestamp, sent_at or
	// created_at, perhaps ending in a unit (_s, _ms, _us, _ns: "ts_ms"),
	// else the first. A unit the time column's name ends in is the unit
	// when Unit is UnitAuto (Reader.Chosen says so).
	TimeCol string
	// TimeField is the JSON time field, dotted for nesting ("req.ts").
	// Empty picks a field by the names TimeCol's default takes.
	TimeField string
	// KeyCol and KeyField name the column or field that splits the log per
	// key (a tenant, an API key); empty for none.
	KeyCol, KeyField string
	// EndCol/EndField name when each call ended, or DurationCol/DurationField
	// how long it took; with either, Record.End is set.
	EndCol, EndField           string
	DurationCol, DurationField string
	// StatusCol and StatusField name the column or field of each call's
	// HTTP status (a whole number from 100 to 599), read into
	// Record.Status; empty for none.
	StatusCol, StatusField string
	// DurationUnit is the unit of plain-number durations (default seconds);
	// durations with a unit ("150ms") are read as Go durations.
	DurationUnit Unit
	Unit         Unit
	// Zone is the time zone of times written without one ("2026-03-10
	// 20:02:24.078"); nil makes such a time an error that says so.
	Zone *time.Location
	// SkipInvalid counts bad lines and goes on instead of failing.
	SkipInvalid bool
	// AccessFilter keeps only the access-log requests it matches (path,
	// method, status), and in a log with a status column or field the
	// lines whose status it matches; nil keeps all. Lines it leaves out
	// are counted.
	AccessFilter *accesslog.Filter
	// Workers parse ahead of the consumer; 0 means GOMAXPROCS.
	Workers int
	// Costs says where each send's cost in each unit is read, at most
	// MaxCosts units: Record.Cost[i] and Batch.Cost[i] hold the cost in
	// Costs[i].Unit. A cost is a whole number from 0 up; a line without one
	// is an input error. Plain logs and access logs carry no costs.
	Costs []CostSource
	// SettledCol and SettledField name the column or field of the instant
	// each send's cost became known (a time as the time column's, at or
	// after the send), read into Record.Settled with the actual costs
	// (CostSource.ActualCol, ActualField); an empty cell, or a JSON field
	// missing or null, leaves the send never settled. Empty for none.
	SettledCol, SettledField string
	// Texts names other columns or fields read as text with each send,
	// for the caller's own use (infer reads the rate-limit headers so):
	// Record.Texts[i] and Batch.Texts hold Texts[i]'s text. A CSV column
	// the header does not name, a field a line lacks or holds null, and an
	// empty cell read as "". A JSON list reads as its members joined by
	// ", " (as an HTTP header repeated), an object as its JSON text.
	Texts []TextSource
}

// TextSource names a column read as text: a CSV column (a header name,
// matched without regard to case, or a 1-based index) or a JSON-lines
// field (dotted for nesting); an empty name reads none.
type TextSource struct {
	Col, Field string
}

// NotSettled is Record.Settled and Batch.Settled of a send never settled.
const NotSettled = math.MinInt64

// HasSettled reports whether records carry a settlement.
func (o *Options) HasSettled() bool { return o.SettledCol != "" || o.SettledField != "" }

// MaxCosts is the most cost units a reader reads per send.
const MaxCosts = 4

// CostSource names where one unit's cost is read: a CSV column (a header
// name or a 1-based index) or a JSON-lines field (dotted for nesting).
type CostSource struct {
	Unit       string
	Col, Field string
	// ActualCol or ActualField, with Options.SettledCol or SettledField,
	// names where the cost known at the send's settlement is read: Col or
	// Field then hold the estimate charged from the send on.
	ActualCol, ActualField string
}

// HasCosts reports whether records carry costs.
func (o *Options) HasCosts() bool { return len(o.Costs) > 0 }

// Record is one send read from a log.
type Record struct {
	At   int64 // start, in nanoseconds
	End  int64 // end, in nanoseconds, when the options name an end or a duration
	Line int64 // 1-based line number in its file
	// Key is the record's key when the options name one. It is valid only
	// until the next call to Next.
	Key []byte
	// Cost holds the send's cost in each unit of Options.Costs, in order.
	Cost [MaxCosts]int64
	// Status is the call's HTTP status when the options name one, else 0.
	Status int16
	// Settled and Actual, when the options name a settlement, are when the
	// send's costs became known (NotSettled for never) and what they were,
	// by unit as Cost (the estimates, for a send never settled).
	Settled int64
	Actual  [MaxCosts]int64
	// Texts holds the text of each Options.Texts source, in order; nil
	// when the options name none.
	Texts []string
}

// HasEnd reports whether records carry an end time.
func (o *Options) HasEnd() bool {
	return o.Format == FormatNginx || o.Format == FormatApache || o.EndCol != "" || o.EndField != "" || o.DurationCol != "" || o.DurationField != ""
}

// HasStatus reports whether records carry an HTTP status.
func (o *Options) HasStatus() bool { return o.StatusCol != "" || o.StatusField != "" }

// HasKey reports whether records carry a key.
func (o *Options) HasKey() bool { return o.KeyCol != "" || o.KeyField != "" }

// maxDuration bounds a call's duration, against typos in units.
const maxDuration = 100 * 365 * 24 * time.Hour

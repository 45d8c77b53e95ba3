package infer

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/rlcheck/rlcheck/sendlog"
)

// ReadOptions say how to read a log of calls with their statuses: the
// send log's options (time, key, layout, and in Log.Costs where each
// unit's cost is read) and where the status is.
type ReadOptions struct {
	Log sendlog.Options
	// StatusCol and StatusField name the CSV column or JSON-lines field
	// of each call's HTTP status; empty means "status".
	StatusCol, StatusField string
	// HeaderCols and HeaderFields name the CSV column (a header name or a
	// 1-based index) or JSON-lines field (dotted) of a rate-limit header
	// where it is not the header's default (Header.Col); "" reads none.
	HeaderCols, HeaderFields map[Header]string
}

// ErrNoStatus is returned, wrapped, for a log that gives no status.
var ErrNoStatus = errors.New("inferring a contract needs each call's status (2xx or 429)")

// Log is a log read for inference: its calls per key, in file order.
type Log struct {
	Keys  []string // in order of first appearance; one "" without a key
	Sends map[string][]Send
	// Units are the cost units each Send.Cost holds, in order.
	Units []string
	// Other counts the calls of another status (5xx, other 4xx): they
	// say nothing about the rules and are left out.
	Other int
	// Answers counts the calls whose answer carried a rate-limit header;
	// BadHeaders the headers that did not parse, by Header.
	Answers    int
	BadHeaders [NumHeaders]BadHeaders
}

// Open opens one input; Read calls it once.
type Open func() (io.Reader, error)

// Read reads a CSV or JSON-lines log with a status per call in one pass
// through sendlog: the status, key, costs and rate-limit headers come
// with each record.
func Read(name string, open Open, opt ReadOptions) (*Log, error) {
	so := opt.Log
	so.StatusCol, so.StatusField = cmp.Or(opt.StatusCol, "status"), cmp.Or(opt.StatusField, "status")
	so.Texts = headerSources(opt)
	log := &Log{Sends: map[string][]Send{}}
	answers := answerCache{m: map[[NumHeaders]string]parsedAnswer{}}
	for _, c := range opt.Log.Costs {
		log.Units = append(log.Units, c.Unit)
	}
	sums := make([]int64, len(log.Units))
	var all []Send
	var keys []string // each kept send's key, with a key column
	err := each(name, open, so, func(rec sendlog.Record) error {
		st := status(int(rec.Status))
		if st == other {
			log.Other++
			return nil
		}
		cost, err := costOf(name, rec, log.Units, sums)
		if err != nil {
			return err
		}
		s := Send{At: rec.At, Refused: st == refusedStatus, Line: rec.Line, Cost: cost}
		answers.answer(&s, rec.Texts, log)
		all = append(all, s)
		if so.HasKey() {
			keys = append(keys, string(rec.Key))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !so.HasKey() {
		log.Keys, log.Sends[""] = []string{""}, all
		return log, nil
	}
	for i, k := range keys {
		if _, seen := log.Sends[k]; !seen {
			log.Keys = append(log.Keys, k)
		}
		log.Sends[k] = append(log.Sends[k], all[i])
	}
	return log, nil
}

// each reads every record of the input.
func each(name string, open Open, opt sendlog.Options, f func(sendlog.Record) error) error {
	in, err := open()
	if err != nil {
		return err
	}
	if c, ok := in.(io.Closer); ok {
		defer c.Close()
	}
	r := sendlog.NewReader(name, in, opt)
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if r.Format() != sendlog.FormatCSV && r.Format() != sendlog.FormatJSONL {
			return fmt.Errorf("%s: read as %v: %w: give CSV or JSON lines with a status column", name, r.Format(), ErrNoStatus)
		}
		if err := f(rec); err != nil {
			return err
		}
	}
}

type statusKind int

const (
	acceptedStatus statusKind = iota
	refusedStatus
	other
)

// status sorts an HTTP status (sendlog reads it, 100 to 599): 2xx
// accepted, 429 refused, any other code neither.
func status(n int) statusKind {
	switch {
	case n == 429:
		return refusedStatus
	case n >= 200 && n < 300:
		return acceptedStatus
	}
	return other
}

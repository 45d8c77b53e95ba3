package infer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// Open opens one input; Read calls it once, or twice to read a key
// column beside the status.
type Open func() (io.Reader, error)

// Read reads a CSV or JSON-lines log with a status per call.
func Read(name string, open Open, opt ReadOptions) (*Log, error) {
	so := opt.Log
	so.KeyCol, so.KeyField = "status", "status"
	if opt.StatusCol != "" {
		so.KeyCol = opt.StatusCol
	}
	if opt.StatusField != "" {
		so.KeyField = opt.StatusField
	}
	log := &Log{Sends: map[string][]Send{}}
	for _, c := range opt.Log.Costs {
		log.Units = append(log.Units, c.Unit)
	}
	sums := make([]int64, len(log.Units))
	var all []Send
	var format sendlog.Format
	err := each(name, open, so, &format, func(rec sendlog.Record) error {
		st, ok := status(rec.Key)
		switch {
		case rec.Key == nil || len(bytes.TrimSpace(rec.Key)) == 0:
			return &sendlog.InputError{File: name, Line: rec.Line, Msg: "no status"}
		case !ok:
			return &sendlog.InputError{File: name, Line: rec.Line, Text: string(rec.Key), Msg: "the status is not an HTTP status code"}
		case st == other:
			log.Other++
			return nil
		}
		cost, err := costOf(name, rec, log.Units, sums)
		if err != nil {
			return err
		}
		all = append(all, Send{At: rec.At, Refused: st == refusedStatus, Line: rec.Line, Cost: cost})
		return nil
	})
	if err != nil {
		return nil, statusError(err)
	}
	if err := readHeaders(name, open, format, opt, all, log); err != nil {
		return nil, err
	}
	if !opt.Log.HasKey() {
		log.Keys, log.Sends[""] = []string{""}, all
		return log, nil
	}
	i := 0
	err = each(name, open, opt.Log, &format, func(rec sendlog.Record) error {
		if i < len(all) && all[i].Line == rec.Line {
			k := string(rec.Key)
			if _, seen := log.Sends[k]; !seen {
				log.Keys = append(log.Keys, k)
			}
			log.Sends[k] = append(log.Sends[k], all[i])
			i++
		}
		return nil
	})
	if err == nil && i != len(all) {
		err = &sendlog.InputError{File: name, Msg: "the key column and the status column give different lines"}
	}
	return log, err
}

// statusError names the status where the reader, which read it as the
// key, names the key.
func statusError(err error) error {
	var ie *sendlog.InputError
	if errors.As(err, &ie) {
		fixed := *ie
		fixed.Msg = strings.NewReplacer("sendlog.Options.KeyCol", "status column", "(the key)", "(the status)").Replace(ie.Msg)
		return &fixed
	}
	return err
}

// each reads every record of the input.
func each(name string, open Open, opt sendlog.Options, format *sendlog.Format, f func(sendlog.Record) error) error {
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
		*format = r.Format()
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

// status reads an HTTP status: 2xx accepted, 429 refused, any other
// code neither.
func status(b []byte) (statusKind, bool) {
	b = bytes.Trim(bytes.TrimSpace(b), `"`)
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 100 || n > 599 {
		return other, false
	}
	switch {
	case n == 429:
		return refusedStatus, true
	case n >= 200 && n < 300:
		return acceptedStatus, true
	}
	return other, true
}

package infer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rlcheck/rlcheck/buildinfo"
)

// Summary is what a streamed report leaves behind: what the command's exit
// status and --write-contract need.
type Summary struct {
	Keys         int
	Calls        int
	Contradicted bool    // some key's log no reading explains, or explains only with more rules than a tolerance needs
	Looser       bool    // some key's declared contract allows refused calls
	Only         *Result // the result of the only key, when the log holds one
}

// Stream infers the contract of each key of log in turn and writes it to w
// in format ("text" or "json", as WriteText and WriteJSON write a Report),
// letting each key's result go once written: memory follows one key's
// inference, not the keys in the log.
func Stream(w io.Writer, format, file string, log *Log, opt Options, all bool) (*Summary, error) {
	if opt.Units == nil {
		opt.Units = log.Units
	}
	kw := newKeyWriter(w, format, file, log, all)
	sum := &Summary{Keys: len(log.Keys)}
	for i, k := range log.Keys {
		res := Infer(log.Sends[k], opt)
		sum.Calls += res.Sends
		sum.Contradicted = sum.Contradicted || res.contradicted()
		sum.Looser = sum.Looser || res.Declared != nil && res.Declared.Looser()
		if len(log.Keys) == 1 {
			sum.Only = res
		}
		if err := kw.key(i, res); err != nil {
			return nil, err
		}
	}
	return sum, kw.close()
}

// keyWriter writes a report key by key, text or JSON.
type keyWriter struct {
	w    io.Writer
	json bool
	file string
	log  *Log
	all  bool
	n    int    // keys written
	tail []byte // JSON: what follows the keys
}

func newKeyWriter(w io.Writer, format, file string, log *Log, all bool) *keyWriter {
	return &keyWriter{w: w, json: format == "json", file: file, log: log, all: all}
}

// key writes the result of the i-th key of the log.
func (kw *keyWriter) key(i int, res *Result) error {
	defer func() { kw.n++ }()
	if kw.json {
		return kw.jsonKey(i, res)
	}
	b := &strings.Builder{}
	if i > 0 {
		b.WriteString("\n")
	}
	if k := kw.log.Keys[i]; k != "" || len(kw.log.Keys) > 1 {
		fmt.Fprintf(b, "key %q: ", k)
	}
	writeKey(b, kw.file, res, kw.all)
	_, err := io.WriteString(kw.w, b.String())
	return err
}

// jsonKey writes one element of the document's "keys", after the head of
// the document for the first: byte for byte what encoding the whole
// document with two-space indents writes.
func (kw *keyWriter) jsonKey(i int, res *Result) error {
	sep := ",\n    "
	if kw.n == 0 {
		head, err := kw.jsonHead()
		if err != nil {
			return err
		}
		sep = string(head) + "[\n    "
	}
	el, err := json.MarshalIndent(jsonKey(kw.log.Keys[i], res), "    ", "  ")
	if err != nil {
		return err
	}
	_, err = io.WriteString(kw.w, sep+string(el))
	return err
}

// jsonHead returns the document up to the value of "keys" and keeps what
// follows it in kw.tail.
func (kw *keyWriter) jsonHead() ([]byte, error) {
	calls := 0
	for _, k := range kw.log.Keys {
		calls += len(kw.log.Sends[k])
	}
	doc := jsonReport{SchemaVersion: 1, Version: buildinfo.Version(), File: kw.file, Calls: calls,
		OtherStatuses: kw.log.Other, BadHeaders: jsonBadHeaders(kw.log)}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	const keys = `"keys": null`
	at := bytes.Index(b.Bytes(), []byte(keys))
	out := b.Bytes()
	kw.tail = out[at+len(keys):]
	return out[:at+len(`"keys": `)], nil
}

// close ends the report: the statuses left out and the malformed headers
// in text, the rest of the document in JSON.
func (kw *keyWriter) close() error {
	if kw.json {
		if kw.n == 0 {
			head, err := kw.jsonHead()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(kw.w, "%snull%s", head, kw.tail)
			return err
		}
		_, err := fmt.Fprintf(kw.w, "\n  ]%s", kw.tail)
		return err
	}
	b := &strings.Builder{}
	if kw.log.Other > 0 {
		fmt.Fprintf(b, "\n%s of another status than 2xx or 429 left out.\n", plural(kw.log.Other, "call"))
	}
	writeBadHeaders(b, kw.log)
	_, err := io.WriteString(kw.w, b.String())
	return err
}

package infer

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/buildinfo"
)

// TestStreamWritesWhatTheReportWrites: streaming the keys one at a time
// writes the document a Report of every key writes, in text and JSON, with
// several keys, one and none, and sums up what the exit status needs.
func TestStreamWritesWhatTheReportWrites(t *testing.T) {
	sec := int64(time.Second)
	call := func(at int64, refused bool, line int64) Send { return Send{At: at, Refused: refused, Line: line} }
	logs := map[string]*Log{
		"none": {Sends: map[string][]Send{}},
		"one":  {Keys: []string{""}, Sends: map[string][]Send{"": {call(0, false, 2), call(sec/10, true, 3), call(2*sec, false, 4)}}},
		"three": {Keys: []string{"a", "b", "c"}, Sends: map[string][]Send{
			"a": {call(0, false, 2), call(1, true, 3)},
			"b": {call(0, false, 4), call(5*sec, false, 5)},
			"c": {call(0, true, 6)},
		}, Other: 2},
	}
	for name, log := range logs {
		for _, format := range []string{"text", "json"} {
			var streamed, whole bytes.Buffer // the text report of every key is the one written whole before
			sum, err := Stream(&streamed, format, "f.csv", log, Options{}, false)
			require.NoError(t, err)
			rep := Run("f.csv", log, Options{})
			if format == "json" {
				// the whole document encoded at once, as it was before keys were streamed
				doc := jsonReport{SchemaVersion: 1, Version: buildinfo.Version(), File: "f.csv", Calls: rep.Calls, OtherStatuses: log.Other, BadHeaders: jsonBadHeaders(log)}
				for i, res := range rep.Keys {
					doc.Keys = append(doc.Keys, jsonKey(log.Keys[i], res))
				}
				enc := json.NewEncoder(&whole)
				enc.SetIndent("", "  ")
				require.NoError(t, enc.Encode(doc))
				var back jsonReport
				require.NoError(t, json.Unmarshal(streamed.Bytes(), &back), "%s: %s", name, streamed.String())
				assert.Len(t, back.Keys, len(log.Keys), name)
			} else {
				require.NoError(t, rep.WriteText(&whole, false))
			}
			assert.Equal(t, whole.String(), streamed.String(), "%s, %s", name, format)
			assert.Equal(t, len(log.Keys), sum.Keys, name)
			assert.Equal(t, rep.Calls, sum.Calls, name)
			assert.Equal(t, rep.Contradicted(), sum.Contradicted, name)
			assert.Equal(t, len(log.Keys) == 1, sum.Only != nil, name)
		}
	}
}

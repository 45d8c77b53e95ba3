package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckInputHints pins down input errors' messages as the command
// prints them: the flag that would read the input is named by the CLI
// (the library names none), a cost's missing column or field names the
// one that likely holds it, the column and unit taken from a header name
// are said on stderr, and an access-log error quotes the line once.
func TestCheckInputHints(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	when := write("when.csv", "key,when\na,1700000000000\n")
	spaced := write("spaced.csv", "user id,sent at\na,1700000000000\n")
	ms := write("ms.csv", "ts,key\n1700000000000,a\n")
	named := write("named.csv", "key,sent_at_ms\na,1700000000000\nb,1700000000500\n")
	usage := write("usage.jsonl", `{"ts":1700000000,"usage":{"prompt_tokens":30,"completion_tokens":10,"total_tokens":40}}`+"\n")
	totals := write("totals.csv", "ts,total_tokens\n1700000000,40\n")
	created := write("created.jsonl", `{"id":"x","status":200,"created":1700000000}`+"\n")
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{when}, []string{when + `:2: column 1 ("key"): not a timestamp`, `the header is key,when; column 2 ("when") holds a time`, "(try --time-col when)\n"}},
		{[]string{spaced}, []string{`(try --time-col "sent at")`}},
		{[]string{"--unit", "s", ms}, []string{ms + ":2: timestamp out of range: 1700000000000 read in s is beyond the year 2262; as a 13-digit epoch in ms it is 2023-11-14T22:13:20Z", "(try --unit ms)\n"}},
		{[]string{"--input-format", "nginx", ms}, []string{ms + `:1: nginx $time_local: no [time] after the client address (the line looks like CSV, not an nginx access log): "ts,key"` + "\n"}},
		{[]string{"--rules", "5/1s, 100 tokens/1m", usage}, []string{usage + `:1: --cost tokens=tokens: no field "tokens"; "usage.total_tokens" may hold the tokens cost`, "(try --cost tokens=usage.total_tokens)\n"}},
		{[]string{"--rules", "5/1s, 100 tokens/1m", "--cost", "tokens=prompt_tokens", usage}, []string{"(try --cost tokens=usage.prompt_tokens)\n"}},
		{[]string{created}, []string{created + `:1: no time field (ts, time, timestamp, sent_at or created_at, each maybe ending in _ms, _us, _ns or _s); set --time-field; field "created" holds a time`, "(try --time-field created)\n"}},
		{[]string{"--rules", "5/1s, 100 tokens/1m", totals}, []string{totals + `:1: --cost tokens=tokens: no column named "tokens" in the header; "total_tokens" may hold the tokens cost`, "(try --cost tokens=total_tokens)\n"}},
	} {
		out, errOut, code := run(t, "", append([]string{"check", "--rules", "5/1s"}, tt.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tt.args, errOut)
		assert.Empty(t, out)
		for _, w := range tt.want {
			assert.Contains(t, errOut, w, tt.args)
		}
	}
	out, errOut, code := run(t, "", "check", "--rules", "1/1s", named)
	assert.Equal(t, exitViolations, code, errOut)
	assert.Equal(t, "rlcheck: "+named+`: time from column 2 "sent_at_ms" (by its name), in ms (by its suffix)`+"\n", errOut)
	assert.Contains(t, out, "timestamps as ms (from the name sent_at_ms)")
}

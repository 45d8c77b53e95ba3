package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONListsTheWorstKeys: check --format json lists the --keys worst
// keys in full and counts every key in the totals, as --keys 0 does.
func TestJSONListsTheWorstKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString("ts_ms,key\n")
	for k := range 7 {
		for i := range k + 1 { // key k sends k+1 calls in one second
			fmt.Fprintf(&b, "%d,k%d\n", 1_700_000_000_000+int64(k*10_000+i), k)
		}
	}
	type doc struct {
		Keys []struct {
			Key        string `json:"key"`
			Violations int64  `json:"violations"`
		} `json:"keys"`
		KeyCount   int   `json:"key_count"`
		KeysListed *int  `json:"keys_listed"`
		Violations int64 `json:"violations"`
		Rules      []struct {
			Violations int64 `json:"violations"`
			Keys       int   `json:"keys_with_violations"`
			Max        int64 `json:"max_in_window"`
		} `json:"rules"`
	}
	parse := func(keys string) doc {
		out, _, code := run(t, b.String(), "check", "--rules", "2/1s", "--key-col", "key", "--format", "json", "--keys", keys, "-")
		require.Equal(t, 1, code, out)
		var d doc
		require.NoError(t, json.Unmarshal([]byte(out), &d), out)
		return d
	}
	all, worst := parse("0"), parse("3")
	assert.Len(t, all.Keys, 7)
	assert.Nil(t, all.KeysListed)
	require.Len(t, worst.Keys, 3)
	require.NotNil(t, worst.KeysListed)
	assert.Equal(t, 3, *worst.KeysListed)
	assert.Equal(t, 7, worst.KeyCount)
	assert.Equal(t, []string{"k6", "k5", "k4"}, []string{worst.Keys[0].Key, worst.Keys[1].Key, worst.Keys[2].Key})
	assert.Equal(t, all.Violations, worst.Violations, "every key counted")
	assert.Equal(t, all.Rules, worst.Rules, "the totals over every key")
}

package rule

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParsesTheSpellingsPeopleWrite: the rate words providers print (rpm,
// TPM, rpd), limits shortened with k and M, thousands separators and
// "req" as a call, each read as the rule meant; a comma that cannot be a
// thousands separator says that commas separate rules.
func TestParsesTheSpellingsPeopleWrite(t *testing.T) {
	for text, want := range map[string]string{
		"500 req/min":               "500/1m",
		"500 requests/min":          "500/1m",
		"500 rpm":                   "500/1m",
		"10 RPS":                    "10/1s",
		"10000 rpd fixed":           "10000/24h fixed",
		"90k tokens/min":            "90000 tokens/1m",
		"90K TPM":                   "90000 tokens/1m",
		"2M tpd":                    "2000000 tokens/24h",
		"500/min,90,000 tokens/min": "500/1m,90000 tokens/1m",
		"1,000,000 tokens/1d, 5/1s": "1000000 tokens/24h,5/1s",
		"12,000/1m":                 "12000/1m",
	} {
		rules, err := ParseList(text)
		require.NoError(t, err, text)
		var got []string
		for _, r := range rules {
			got = append(got, r.String())
		}
		assert.Equal(t, want, join(got), text)
	}
	_, err := ParseList("1,5/1s")
	assert.ErrorContains(t, err, "a comma separates rules: write 90000, not 90,000")
	_, err = ParseList("9999999999999999999k/1s")
	assert.Error(t, err, "a limit past int64 is refused")
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

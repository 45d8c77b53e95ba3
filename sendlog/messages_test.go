package sendlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAccessFormatOnCSVQuotesTheLineOnce pins down that --input-format
// nginx on a CSV file printed the offending line twice in one message.
func TestAccessFormatOnCSVQuotesTheLineOnce(t *testing.T) {
	for _, f := range []Format{FormatNginx, FormatApache} {
		_, _, err := readAll("a.csv", "ts,key\n1700000000000,a\n", Options{Format: f})
		require.Error(t, err, f)
		msg := err.Error()
		assert.Equal(t, 1, strings.Count(msg, `"ts,key"`), "%s: %s", f, msg)
		assert.Contains(t, msg, "a.csv:1:", f)
		assert.Contains(t, msg, "looks like CSV", f)
	}
}

package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// TestNoRequestsStillSpeaksTheFormat: a run no request reached prints its
// reason in text, and in JSON a report of no sends that says it, not text
// a JSON reader chokes on.
func TestNoRequestsStillSpeaksTheFormat(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		res, err := Run(context.Background(), Config{
			Options: Options{Rules: []rule.Rule{{Limit: 5, Window: time.Second}}},
			Judge:   judgeLog, Listen: "127.0.0.1:0", Duration: 50 * time.Millisecond, Out: &out,
			Report: report.Options{Format: format},
		})
		require.NoError(t, err, format)
		if format == "text" {
			assert.Equal(t, "no requests arrived\n", out.String())
			continue
		}
		var doc report.Doc
		require.NoError(t, json.Unmarshal(out.Bytes(), &doc), out.String())
		assert.Equal(t, int64(0), doc.Sends)
		assert.Equal(t, []string{"no requests arrived"}, doc.NotChecked)
		require.NotNil(t, res)
		assert.Equal(t, int64(0), res.Violations())
	}
}

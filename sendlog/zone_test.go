package sendlog

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeWithoutZone: a time written without a zone is refused saying
// so, with no Go layout and no T the input lacks, and is read in the zone
// Options.Zone gives.
func TestTimeWithoutZone(t *testing.T) {
	const text = "ts,key\n2026-03-10 20:02:24.078,a\n"
	_, err := zoneRead(t, text, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `time "2026-03-10 20:02:24.078" has no time zone`)
	assert.NotContains(t, err.Error(), "2006-01-02")
	assert.NotContains(t, err.Error(), "2026-03-10T")
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for zone, want := range map[*time.Location]time.Time{
		time.UTC: time.Date(2026, 3, 10, 20, 2, 24, 78e6, time.UTC),
		berlin:   time.Date(2026, 3, 10, 19, 2, 24, 78e6, time.UTC),
	} {
		got, err := zoneRead(t, text, Options{Zone: zone})
		require.NoError(t, err)
		assert.Equal(t, []int64{want.UnixNano()}, got, zone.String())
	}
	_, err = zoneRead(t, "ts\n2026-03-10 2x:02\n", Options{Zone: time.UTC})
	assert.ErrorContains(t, err, "is not an RFC 3339 time (2026-01-05T09:00:00.000Z")
}

// zoneRead reads text's send times.
func zoneRead(t *testing.T, text string, opt Options) ([]int64, error) {
	t.Helper()
	r := NewReader("z.csv", strings.NewReader(text), opt)
	defer r.Close()
	var out []int64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec.At)
	}
}

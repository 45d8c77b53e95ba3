package workload

import (
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleFiles(name string) (io.ReadCloser, error) {
	files := map[string]string{
		"s.txt":     "# measured\n3ms\n1ms\n\n2ms\n",
		"bad.txt":   "1ms\nsoon\n",
		"empty.txt": "# nothing\n",
		"zero.txt":  "0\n0s\n",
	}
	if f, ok := files[name]; ok {
		return io.NopCloser(strings.NewReader(f)), nil
	}
	return nil, errors.New("no such file")
}

func TestEmpiricalDrawsTheSamples(t *testing.T) {
	d, err := ParseDistFiles("empirical(s.txt)", sampleFiles)
	require.NoError(t, err)
	require.Equal(t, Empirical, d.Kind)
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}, d.Samples.D)
	assert.Equal(t, "empirical(s.txt)", d.String())
	lo, hi, ok := d.Bounds()
	assert.Equal(t, []any{time.Millisecond, 3 * time.Millisecond, true}, []any{lo, hi, ok})
	assert.Equal(t, 2*time.Millisecond, d.Mean())
	assert.False(t, d.IsZero())
	seen := map[time.Duration]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		seen[d.Draw(r)]++
	}
	assert.Len(t, seen, 3, "every sample is drawn, and nothing else")
	back, err := ParseDistFiles(d.String(), sampleFiles)
	require.NoError(t, err)
	assert.Equal(t, d.Samples.D, back.Samples.D)

	half := d.Scaled(func(x time.Duration) time.Duration { return x / 2 })
	assert.Equal(t, 1500*time.Microsecond, half.Samples.D[2])
	assert.Equal(t, 3*time.Millisecond, d.Samples.D[2], "Scaled leaves its receiver")

	z, err := ParseDistFiles("empirical(zero.txt)", sampleFiles)
	require.NoError(t, err)
	assert.True(t, z.IsZero())
}

func TestEmpiricalErrors(t *testing.T) {
	for in, want := range map[string]string{
		"empirical(bad.txt)":   `distribution "empirical(bad.txt)": bad.txt:2: "soon" is not a duration`,
		"empirical(empty.txt)": `distribution "empirical(empty.txt)": empty.txt: no durations`,
		"empirical(gone.txt)":  `distribution "empirical(gone.txt)": no such file`,
		"empirical()":          `distribution "empirical()": takes a file of durations, one a line`,
	} {
		_, err := ParseDistFiles(in, sampleFiles)
		assert.ErrorContains(t, err, want, in)
	}
}

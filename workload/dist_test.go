package workload

import (
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		in   string
		want Dist
		err  bool
	}{
		{in: "0", want: Dist{}},
		{in: "2ms", want: Dist{Kind: Fixed, A: 2 * time.Millisecond}},
		{in: "fixed(1s)", want: Dist{Kind: Fixed, A: time.Second}},
		{in: "uniform(100us, 3ms)", want: Dist{Kind: Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond}},
		{in: "exponential(5ms)", want: Dist{Kind: Exponential, A: 5 * time.Millisecond}},
		{in: "lognormal(150ms, 0.6)", want: Dist{Kind: LogNormal, A: 150 * time.Millisecond, Sigma: 0.6}},
		{in: "uniform(3ms, 1ms)", err: true},
		{in: "uniform(3ms)", err: true},
		{in: "-1ms", err: true},
		{in: "gamma(1s)", err: true},
		{in: "uniform(1ms, 2ms", err: true},
		{in: "lognormal(1s, x)", err: true},
	}
	for _, tt := range tests {
		got, err := ParseDist(tt.in)
		if tt.err {
			assert.Error(t, err, "ParseDist(%q)", tt.in)
			continue
		}
		if assert.NoError(t, err, "ParseDist(%q)", tt.in) && assert.Equal(t, tt.want, got, "ParseDist(%q)", tt.in) {
			back, err := ParseDist(got.String())
			assert.NoError(t, err)
			assert.Equal(t, got, back, "%q reads back", got.String())
		}
	}
}

func TestDrawStaysInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	u := Dist{Kind: Uniform, A: 100 * time.Microsecond, B: 3 * time.Millisecond}
	var lo, hi bool
	for range 10000 {
		d := u.Draw(r)
		require.True(t, d >= u.A && d <= u.B, "uniform draw %v outside [%v, %v]", d, u.A, u.B)
		lo = lo || d < u.A+100*time.Microsecond
		hi = hi || d > u.B-100*time.Microsecond
	}
	require.True(t, lo && hi, "uniform draws reach the ends")
	for _, d := range []Dist{{Kind: Exponential, A: time.Millisecond}, {Kind: LogNormal, A: time.Millisecond, Sigma: 1}} {
		for range 1000 {
			x := d.Draw(r)
			require.GreaterOrEqual(t, x, time.Duration(0), "%v drew %v", d, x)
		}
	}
}

func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"0", "2ms", "uniform(100us, 3ms)", "exponential(1s)", "lognormal(1ms, 2)", "fixed(", "uniform(,)", "empirical(s.txt)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDistFiles(s, sampleFiles)
		if err != nil {
			return
		}
		back, err := ParseDistFiles(d.String(), sampleFiles)
		if d.Samples != nil && back.Samples != nil {
			require.Equal(t, d.Samples.D, back.Samples.D)
			back.Samples = d.Samples
		}
		require.NoError(t, err, "%q -> %+v -> %q", s, d, d.String())
		require.Equal(t, d, back, "%q -> %q reads back", s, d.String())
		require.GreaterOrEqual(t, d.A, time.Duration(0), "negative duration from %q", s)
		require.GreaterOrEqual(t, d.B, time.Duration(0), "negative duration from %q", s)
	})
}

func FuzzReadSamples(f *testing.F) {
	for _, s := range []string{"1ms\n2ms\n", "# x\n\n0\n", "-1ms\n", "1h\n\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		smp, err := ReadSamples("f.txt", func(string) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil })
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "f.txt"), err.Error())
			require.Less(t, len(err.Error()), 400, "an excerpt of at most 80 bytes, quoted")
			return
		}
		require.NotEmpty(t, smp.D)
		require.True(t, slices.IsSorted(smp.D))
		require.GreaterOrEqual(t, smp.D[0], time.Duration(0))
	})
}

package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNearest(t *testing.T) {
	names := []string{"api-contract", "cancellation", "clock-skew", "fleet", "gate-order", "seed"}
	for _, tc := range []struct{ in, want string }{
		{"seeed", "seed"},
		{"sed", "seed"},
		{"fleat", "fleet"},
		{"cancelation", "cancellation"},
		{"gate_order", "gate-order"},
		{"seed", "seed"},
		{"xyzzy", ""},
		{"", ""},
		{"s", ""}, // one letter is no basis for a guess at "seed"
	} {
		assert.Equal(t, tc.want, Nearest(tc.in, names), tc.in)
	}
}

func TestOneOf(t *testing.T) {
	assert.NoError(t, OneOf("--format", "junit", "text", "json", "junit", "github"))
	assert.EqualError(t, OneOf("--format", "xml", "text", "json", "junit", "github"), `--format "xml": want text, json, junit or github`)
	assert.EqualError(t, OneOf("--format", "", "text", "json"), `--format "": want text or json`)
	assert.EqualError(t, OneOf("--only", "b", "a"), `--only "b": want a`)
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	var format Format
	format.Register(fs, "", "", ReportFormats...)
	require.NoError(t, fs.Parse([]string{"--format", "yaml"}))
	f, summary, err := format.Report()
	assert.EqualError(t, err, `--format "yaml": want text, json, junit or github`)
	assert.Empty(t, f+summary)
}

func TestList(t *testing.T) {
	words := []string{"sequential", "combined", "combined-counter", "gated"}
	complete := func(typed string) []string {
		got, _ := List(words)(nil, nil, typed)
		return got
	}
	assert.Equal(t, words, complete(""))
	assert.Equal(t, []string{"combined", "combined-counter"}, complete("com"))
	assert.Equal(t, []string{"combined,sequential", "combined,combined-counter", "combined,gated"}, complete("combined,"))
	assert.Equal(t, []string{"gated, combined,sequential"}, complete("gated, combined,se"))
	assert.Empty(t, complete("sequential,x"))
}

func TestOptionalUint(t *testing.T) {
	var o OptionalUint
	assert.Equal(t, "", o.String())
	require.NoError(t, o.Set("0"))
	assert.Equal(t, OptionalUint{Value: 0, Given: true}, o)
	assert.Equal(t, "0", o.String())
	for _, bad := range []string{"-1", "1.5", "x", ""} {
		assert.EqualError(t, new(OptionalUint).Set(bad), "want a whole number, 0 or more", bad)
	}
}

func TestPrepareAndWriteTo(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, PrepareFile(""))
	require.NoError(t, PrepareDir(""))
	path := filepath.Join(dir, "a", "b", "out.txt")
	require.NoError(t, PrepareFile(path))
	assert.DirExists(t, filepath.Dir(path))
	ents, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Empty(t, ents, "the trial file is removed")

	write := func(w io.Writer) error { _, err := io.WriteString(w, "x\n"); return err }
	require.NoError(t, WriteTo(path, nil, write))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(data))
	var stdout bytes.Buffer
	require.NoError(t, WriteTo("-", &stdout, write))
	assert.Equal(t, "x\n", stdout.String())
	require.NoError(t, WriteTo("", nil, write))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), nil, 0o644))
	assert.ErrorContains(t, PrepareFile(filepath.Join(dir, "f", "x.prom")), "cannot write into")
}

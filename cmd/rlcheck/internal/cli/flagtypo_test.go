package cli

import (
	"errors"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
)

// TestFlagTypo: a misspelled flag is answered with the flag meant.
func TestFlagTypo(t *testing.T) {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	for _, n := range []string{"rule", "rules", "key-col", "time-col", "format", "contract", "list"} {
		fs.String(n, "", "")
	}
	for typo, want := range map[string]string{
		"rulse": "rules", "key-column": "key-col", "time-column": "time-col", "fromat": "format", "contarct": "contract",
	} {
		err := FlagTypo(fs, errors.New("unknown flag: --"+typo))
		assert.EqualError(t, err, "unknown flag: --"+typo+"; did you mean --"+want+"?")
	}
	err := FlagTypo(fs, errors.New("unknown flag: --zzzzzzz"))
	assert.EqualError(t, err, "unknown flag: --zzzzzzz", "nothing near")
	other := errors.New(`invalid argument "x" for "--list" flag`)
	assert.Equal(t, other, FlagTypo(fs, other))
}

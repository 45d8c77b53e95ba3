package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

func TestServeCosts(t *testing.T) {
	f, fs, err := serveConfig(t, "--rules", "5/1s, 100 tokens/1s fixed, 10 input/1s burst 20",
		"--cost", "tokens=X-Tokens", "--cost", "input=body:usage.input")
	require.NoError(t, err)
	cfg, err := f.Config(fs)
	require.NoError(t, err)
	assert.Equal(t, []serve.CostSource{{Unit: "tokens", Header: "X-Tokens"}, {Unit: "input", Field: "usage.input"}}, cfg.Costs)

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--rules", "100 tokens/1s"}, "--cost tokens=HEADER or --cost tokens=body:FIELD"},
		{[]string{"--rules", "100 tokens/1s", "--cost", "points=X-P"}, "no rule meters points"},
		{[]string{"--rules", "100 tokens/1s", "--cost", "tokens"}, "want UNIT=HEADER or UNIT=body:FIELD"},
		{[]string{"--rules", "100 tokens/1s", "--cost", "tokens=body:"}, "want a field after body:"},
		{[]string{"--rules", "100 tokens/1s", "--cost", "tokens=A", "--cost", "tokens=B"}, "unit tokens given twice"},
	} {
		_, _, err := serveConfig(t, tc.args...)
		assert.ErrorContains(t, err, tc.err, "%v", tc.args)
	}
}

// The command's Judge reads the costs back from serve's log.
func TestJudgeServeLogReadsCosts(t *testing.T) {
	rules, err := rule.ParseList("100 tokens/1s")
	require.NoError(t, err)
	opt := serve.Options{Rules: rules}
	log := serve.LogHeader + ",tokens\n1000,,200,5,,,60\n2000,,429,5,,,50\n3000,,429,5,,,0\n"
	res, err := JudgeServeLog("log", strings.NewReader(log), false, opt)
	require.NoError(t, err)
	assert.EqualValues(t, 2, res.Violations(), "60 + 50 overfills 100, and 110 + 0 too")
}

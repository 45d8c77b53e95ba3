package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// groupFlags are the flags of the shared groups: every command that takes
// one takes it with the same help text and default. --format lists each
// command's own words after one prefix.
var groupFlags = []string{
	"format", "keys", "rules", "rule", "contract", "boundary",
	"input-format", "time-col", "time-field", "key-col", "key-field", "unit", "tz",
	"redis-url", "redis-cluster",
}

// TestFlagGroupsAgree walks every command and holds each group's flags
// to one help text and one default, and each group's error for a bad value
// to one text and exit status on every command that takes it.
func TestFlagGroupsAgree(t *testing.T) {
	root := NewRootCmd(streams{})
	seen := map[string]*pflag.Flag{}
	takers := map[string][]string{}
	for _, c := range root.Commands() {
		for _, name := range groupFlags {
			f := c.Flags().Lookup(name)
			if f == nil {
				continue
			}
			takers[name] = append(takers[name], c.Name())
			first, ok := seen[name]
			if !ok {
				seen[name] = f
				continue
			}
			switch name {
			case "format", "input-format":
				prefix := map[string]string{"format": "output format: ", "input-format": "input layout: "}[name]
				assert.True(t, strings.HasPrefix(f.Usage, prefix), "%s --%s: %q", c.Name(), name, f.Usage)
			case "time-col", "key-col": // sql names a table's columns
				if c.Name() == "sql" {
					continue
				}
				fallthrough
			default:
				assert.Equal(t, first.Usage, f.Usage, "%s --%s help", c.Name(), name)
				assert.Equal(t, first.DefValue, f.DefValue, "%s --%s default", c.Name(), name)
			}
		}
	}
	for _, name := range []string{"format", "keys", "rules", "contract", "boundary"} {
		assert.GreaterOrEqual(t, len(takers[name]), 3, "--%s is shared: %v", name, takers[name])
	}
	t.Logf("takers: %v", takers)
}

// groupErrorArgs are, per command, arguments that would otherwise run:
// a bad value of one group's flag must be the error.
var groupErrorArgs = map[string][]string{
	"check":    {"--rules", "2/1s", "../../testdata/fleet/host1.csv"},
	"simulate": {"../../scenarios/seed.yaml"},
	"run":      {"../../scenarios/seed.yaml"},
	"audit":    {"--rules", "2/1s"},
	"infer":    {"../../testdata/infer/calls.csv"},
	"merge":    {"../../testdata/nosuch.json"},
	"sql":      {"--rules", "2/1s", "--table", "t", "--time-col", "ts"},
	"serve":    {"--rules", "2/1s", "--listen", "127.0.0.1:0", "--duration", "1ms"},
	"watch":    {"--rules", "2/1s", "../../testdata/fleet/host1.csv"},
}

// TestFlagGroupErrorsAgree gives every command that takes a group's flag
// the same bad value: the same message, exit 2, before any work.
func TestFlagGroupErrorsAgree(t *testing.T) {
	root := NewRootCmd(streams{})
	cases := []struct{ flag, value, want string }{
		{"format", "xml", `rlcheck: --format "xml": want `},
		{"rules", "2/x", `rlcheck: rule "2/x": window "x" is neither`},
		{"boundary", "ajar", `boundary "ajar"`},
		{"contract", "../../testdata/nosuch.yaml", "nosuch.yaml: no such file"},
	}
	for _, c := range root.Commands() {
		base, ok := groupErrorArgs[c.Name()]
		if !ok {
			continue
		}
		for _, tc := range cases {
			if c.Flags().Lookup(tc.flag) == nil {
				continue
			}
			t.Run(c.Name()+"/"+tc.flag, func(t *testing.T) {
				args := append([]string{c.Name()}, withFlag(base, tc.flag, tc.value)...)
				_, stderr, code := run(t, "", args...)
				assert.Equal(t, 2, code, "rlcheck %v: %s", args, stderr)
				assert.Contains(t, stderr, tc.want, "rlcheck %v", args)
			})
		}
	}
}

// withFlag is args with --flag value, replacing the flag where args give
// it (--rules with --contract drops the rules, which would be added).
func withFlag(args []string, flag, value string) []string {
	out := []string{"--" + flag, value}
	for i := 0; i < len(args); i++ {
		if args[i] == "--"+flag || flag == "contract" && args[i] == "--rules" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func TestWithFlag(t *testing.T) {
	require.Equal(t, []string{"--rules", "x", "f"}, withFlag([]string{"--rules", "2/1s", "f"}, "rules", "x"))
}

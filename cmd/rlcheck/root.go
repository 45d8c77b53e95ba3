package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/rlcheck/rlcheck/buildinfo"
	"github.com/rlcheck/rlcheck/cmd/rlcheck/internal/cli"
)

// Exit codes: results are 0 (every rule held) or 1 (violations found);
// anything the user must fix (flags, input files) is 2.
const (
	exitOK         = 0
	exitViolations = 1
	exitUsage      = 2
)

// errViolations is returned by a command whose run found violations: the
// report is already on stdout, so nothing more is printed.
var errViolations = errors.New("violations found")

// usageError marks errors in flags or arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// streams are the command's standard files, so tests can run whole commands.
type streams struct {
	in     io.Reader
	out    io.Writer
	errOut io.Writer
}

// NewRootCmd builds the rlcheck command tree.
func NewRootCmd(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "rlcheck",
		Short:         "Check send logs against several rate limits at once, and simulate the strategies that enforce them",
		Long:          help("root"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.errOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{cli.FlagTypo(c.Flags(), err)} })
	info := buildinfo.Read()
	root.Version = info.Version
	root.SetVersionTemplate(info.String())
	root.AddCommand(
		newCheckCmd(s),
		newSimulateCmd(s),
		newRunCmd(s),
		newAuditCmd(s),
		newServeCmd(s),
		newWatchCmd(s),
		newSQLCmd(s),
		newMergeCmd(s),
		newInferCmd(s),
		&cobra.Command{
			Use: "version", Short: "Print the version, the VCS revision and time, and the Go version", Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error { _, err := io.WriteString(s.out, info.String()); return err },
		},
	)
	cli.CompleteGroups(root)
	return root
}

// Execute runs rlcheck with args and returns the process exit code.
func Execute(args []string, in io.Reader, out, errOut io.Writer) int {
	root := NewRootCmd(streams{in: in, out: out, errOut: errOut})
	root.SetArgs(args)
	err := root.Execute()
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errViolations):
		return exitViolations
	default:
		cli.PrintError(errOut, err, os.Getenv("GITHUB_ACTIONS") == "true")
		return exitUsage
	}
}

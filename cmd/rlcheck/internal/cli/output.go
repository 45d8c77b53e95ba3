package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/sendlog"
)

// PrepareFile makes sure a file can be written at path before the work that
// fills it starts: for each path it creates the missing directories and tries a file
// there, so a long check or simulation never ends in "no such directory".
// Empty paths (no such output) are nothing to prepare.
func PrepareFile(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if err := PrepareDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// PrepareDir creates dir when it is missing and checks that files can be
// written in it ("" is nothing to prepare).
func PrepareDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot write into %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".rlcheck-write-test-*")
	if err != nil {
		return fmt.Errorf("cannot write into %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// PrintError writes a command's error to w: "rlcheck: ..." on a terminal,
// and under GitHub Actions (githubActions) a workflow-command annotation
// on the offending file and line, so bad input shows on the pull request
// like a violation does.
func PrintError(w io.Writer, err error, githubActions bool) {
	if githubActions {
		io.WriteString(w, githubError(err))
		return
	}
	fmt.Fprintln(w, "rlcheck:", Message(err)+FixHint(err))
}

// githubError is err as an annotation: bad input on its file and line
// (standard input has no file to point at), anything else as a plain error.
func githubError(err error) string {
	var in *sendlog.InputError
	if !errors.As(err, &in) {
		return report.GitHubError(Message(err), false, "", 0)
	}
	if strings.HasPrefix(in.File, "<") {
		return report.GitHubError(Message(err), true, "", 0)
	}
	return report.GitHubError(Message(err), true, in.File, in.Line)
}

// settingFlags words the library settings that errors name (libraries
// name their own fields, as Go code sets them) as the flags that set them.
// Longer names come first, so that none is cut short by a shorter one.
var settingFlags = strings.NewReplacer(
	"logcheck.Config.MaxMemory or GOMEMLIMIT", "GOMEMLIMIT",
	"logcheck.Config.ListKeys", "--keys",
	"logcheck.Config.KeepTimes", "--plot and --html",
	"logcheck.Config.MaxBuffered", "--max-buffered",
	"sendlog.Options.Zone", "--tz UTC, or --tz Europe/Berlin",
	"logcheck.Config.MaxDisorder", "--max-disorder",
	"logcheck.Config.MaxInFlight", "--max-in-flight",
	"logcheck.Config.Sort", "--sort",
	"sendlog.Options.DurationField", "--duration-field",
	"sendlog.Options.DurationCol", "--duration-col",
	"sendlog.Options.SkipInvalid", "--skip-invalid",
	"sendlog.Options.TimeField", "--time-field",
	"sendlog.Options.EndField", "--end-field",
	"sendlog.Options.EndCol", "--end-col",
	"sendlog.Options.TimeCol", "--time-col",
	"sendlog.Options.KeyCol", "--key-col",
	"sendlog.Options.StatusField", "--status-field",
	"sendlog.Options.StatusCol", "--status-col",
	"sendlog.Options.Costs", "--cost",
	"sendlog.Options.SettledCol", "--settled-col",
	"sendlog.Options.SettledField", "--settled-field",
	"sendlog.Options.Unit", "--unit",
	"report.Shard.From", "--from",
	"report.Shard.To", "--to",
	"merge.Options.List", "--list",
	"sqlcheck.Spec.CountsOnly", "--counts-only",
	"sqlcheck.Spec.MaxWindow", "--max-window",
	"sqlcheck.Table.Tiebreak", "--tiebreak",
	"sqlcheck.Table.TimeCol", "--time-col",
	"sqlcheck.Table.KeyCol", "--key-col",
	"sqlcheck.Table.Name", "--table",
	"sqlcheck.RunURL", "--run",
)

// Message is err's text as a user of the command line reads it: the
// settings it names worded as flags.
func Message(err error) string { return settingFlags.Replace(err.Error()) }

// WordSkips words the settings named by the input errors of the skipped
// lines the reports list as flags, as Message does for errors.
func WordSkips(files []report.FileInfo) {
	for i := range files {
		for j, e := range files[i].Skips {
			if m := Message(e); m != e.Error() {
				files[i].Skips[j] = errors.New(m)
			}
		}
	}
}

// fixFlags are the flags for the reading options a sendlog.Fix names.
var fixFlags = map[string]string{"TimeCol": "--time-col", "TimeField": "--time-field", "Unit": "--unit", "Costs": "--cost"}

// FixHint words the fix an input error suggests as its flag
// (" (try --unit ms)"), or is "".
func FixHint(err error) string {
	var ie *sendlog.InputError
	if !errors.As(err, &ie) || ie.Fix == nil || fixFlags[ie.Fix.Option] == "" {
		return ""
	}
	v := ie.Fix.Value
	if strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=-") != "" || v == "" {
		v = strconv.Quote(v)
	}
	return fmt.Sprintf(" (try %s %s)", fixFlags[ie.Fix.Option], v)
}

// WriteTo writes an output the user named: nothing for "", stdout for "-",
// else the file at path.
func WriteTo(path string, stdout io.Writer, write func(io.Writer) error) error {
	switch path {
	case "":
		return nil
	case "-":
		return write(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Report resolves check's --format: the default is github under
// GITHUB_ACTIONS=true, else text; with github it also returns the step
// summary's path.
func (f *Format) Report() (string, string, error) {
	format := f.value
	if format == "" {
		format = "text"
		if os.Getenv("GITHUB_ACTIONS") == "true" {
			format = "github"
		}
	}
	if err := OneOf("--format", format, f.words...); err != nil {
		return "", "", err
	}
	if format == "github" {
		return format, os.Getenv("GITHUB_STEP_SUMMARY"), nil
	}
	return format, "", nil
}

// PrintChosen says on w which time column and unit each input was read
// by, where they were chosen by the column's name.
func PrintChosen(w io.Writer, files []report.FileInfo) {
	for _, f := range files {
		if f.Chosen != "" {
			fmt.Fprintf(w, "rlcheck: %s: %s\n", f.Name, f.Chosen)
		}
	}
}

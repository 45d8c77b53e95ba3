package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rlcheck/rlcheck/logcheck"
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
		io.WriteString(w, logcheck.GitHubError(err))
		return
	}
	fmt.Fprintln(w, "rlcheck:", err)
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

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/rlcheck/rlcheck/scenarios"
)

// Nearest returns the candidate closest to name by edit distance, when it
// is close enough to be a typo (at most a third of the name's length, and
// at least 1 edit allowed; ties go to the earlier candidate), else "".
func Nearest(name string, candidates []string) string {
	best, bestD := "", max(1, len(name)/3)+1
	for _, c := range candidates {
		if d := levenshtein.ComputeDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// ScenarioError explains a failed scenarios.Load of path: when path is
// neither a file nor a shipped scenario, it names the nearest shipped one
// and lists them all; any other error is returned as it is.
func ScenarioError(path string, err error) error {
	if _, statErr := os.Stat(path); !errors.Is(statErr, fs.ErrNotExist) || strings.ContainsAny(path, `/\`) {
		return err
	}
	names := scenarios.Names()
	msg := fmt.Sprintf("%s: no such scenario file, and no shipped scenario of that name", path)
	if near := Nearest(strings.TrimSuffix(path, ".yaml"), names); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return fmt.Errorf("%s (shipped: %s)", msg, strings.Join(names, ", "))
}

// OptionalUint is a flag value that may be left unset, so its help needs
// no made-up default ("--seed uint   seed (default: the scenario's)").
type OptionalUint struct {
	Value uint64
	Given bool
}

func (o *OptionalUint) String() string {
	if !o.Given {
		return ""
	}
	return strconv.FormatUint(o.Value, 10)
}

// Set reads a whole number, 0 or more.
func (o *OptionalUint) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return errors.New("want a whole number, 0 or more")
	}
	o.Value, o.Given = v, true
	return nil
}

func (o *OptionalUint) Type() string { return "uint" }

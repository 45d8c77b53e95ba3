package cli

import (
	"fmt"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/pflag"
)

// FlagTypo adds to cobra's "unknown flag: --rulse" the flag the user most
// likely meant ("did you mean --rules?"), as misspelled commands already
// get; any other error is returned as it is.
func FlagTypo(flags *pflag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	name, _, _ = strings.Cut(name, "=")
	if near := nearestFlag(flags, name); near != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, near)
	}
	return err
}

// nearestFlag returns the flag of flags whose name is closest to name:
// one with its letters swapped (--rulse, --rules), then one it begins with
// or that begins with it (--key-column, --key-col), else the least edit
// distance, at most a third of the name and at least 2.
func nearestFlag(flags *pflag.FlagSet, name string) string {
	best, bestD := "", 2*max(2, len(name)/3)+1 // in half edits
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := 2 * levenshtein.ComputeDistance(name, f.Name)
		switch {
		case swapped(name, f.Name):
			d = 1
		case len(f.Name) >= 3 && len(name) >= 3 && (strings.HasPrefix(name, f.Name) || strings.HasPrefix(f.Name, name)):
			d = min(d, 2)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	})
	return best
}

// swapped reports whether b is a with two neighbouring letters swapped.
func swapped(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i+1 < len(a); i++ {
		if a[i] != b[i] {
			return a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
		}
	}
	return false
}

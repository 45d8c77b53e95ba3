package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rlcheck/rlcheck/report"
)

// The flag groups every command shares, each registered by one function
// with one help text and resolved by one method, so a flag means the same
// on every command that takes it (TestFlagGroupsAgree holds them to it).

// Format is --format, the layout of a command's report: the words the
// command writes, one help text, one error for another word, checked
// before any work. Its words are completed by CompleteGroups.
type Format struct {
	value string
	words []string
}

// Register registers --format on fs, defaulting to def (empty: said by
// note), taking words.
func (f *Format) Register(fs *pflag.FlagSet, def, note string, words ...string) {
	f.value, f.words = def, words
	usage := "output format: " + orList(words)
	if note != "" {
		usage += " (" + note + ")"
	}
	fs.Var(f, "format", usage)
}

// Resolve returns the format given, or what is wrong with it.
func (f *Format) Resolve() (string, error) {
	if f.value == "" {
		return "", nil
	}
	return f.value, OneOf("--format", f.value, f.words...)
}

// String, Set and Type make Format a pflag.Value; Set keeps any word, for
// Resolve to judge with the command's other flags.
func (f *Format) String() string     { return f.value }
func (f *Format) Set(s string) error { f.value = s; return nil }
func (f *Format) Type() string       { return "string" }

// ReportFormats are the words of the commands that write check's report.
var ReportFormats = report.Formats

// RegisterKeys registers --keys, how many keys a report lists, on fs.
func RegisterKeys(fs *pflag.FlagSet, keys *int) {
	fs.IntVar(keys, "keys", 20, "with keys, how many the report lists, worst first, the rest summed up (0: all)")
}

// CompleteGroups registers, on every command under root, the completion
// of each flag group's fixed words.
func CompleteGroups(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if f, ok := fl.Value.(*Format); ok {
				_ = c.RegisterFlagCompletionFunc(fl.Name, Words(f.words...))
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// orList writes words as "a, b or c".
func orList(words []string) string {
	out := ""
	for i, w := range words {
		switch {
		case i == 0:
		case i == len(words)-1:
			out += " or "
		default:
			out += ", "
		}
		out += w
	}
	return out
}

package report

import (
	"fmt"
	"io"
	"os"
)

// Formats are the report formats Write takes.
var Formats = []string{"text", "json", "junit", "github"}

// ReportOptions says how Write reports results.
type Options struct {
	Format string // one of Formats; "" is text
	// MaxKeys caps the keys the text report lists, worst first (0: all).
	MaxKeys int
	// PerFile: the results are one per input file, not one merged stream.
	PerFile bool
	// StepSummary, with the github format, is a file the Markdown summary is
	// appended to ($GITHUB_STEP_SUMMARY); "" writes none.
	StepSummary string
}

// Write writes results in the chosen format; several results (one per file)
// are written one after another, or as one JSON document holding them all.
func Write(w io.Writer, results []*Result, o Options) error {
	if o.Format == "json" {
		return writeJSON(w, results, o.PerFile)
	}
	for i, res := range results {
		var err error
		switch o.Format {
		case "junit":
			err = writeJUnit(w, res)
		case "github":
			err = writeGitHub(w, res)
			if err == nil && o.StepSummary != "" {
				err = appendStepSummary(o.StepSummary, res)
			}
		case "text", "":
			if i > 0 {
				io.WriteString(w, "\n")
			}
			err = writeText(w, res, o.MaxKeys)
		default:
			err = fmt.Errorf("logcheck: format %q: want one of %v", o.Format, Formats)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// appendStepSummary adds the Markdown summary to the file GitHub Actions
// shows on the run's page.
func appendStepSummary(path string, res *Result) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := writeStepSummary(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

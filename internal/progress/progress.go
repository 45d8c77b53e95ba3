// Package progress draws the progress bars of long work on a terminal, and
// only there: the bytes a check has read, the seeds simulate --plot runs.
package progress

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// minSize is the input size from which a progress bar is worth showing.
const minSize = 8 << 20

// Wanted reports whether to draw a progress bar on w: only on a
// terminal, never under CI, and never when the user said --no-progress.
func Wanted(w io.Writer, disabled bool) bool {
	if disabled || os.Getenv("CI") != "" || os.Getenv("GITHUB_ACTIONS") == "true" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a byte-counting bar over total bytes of input, or nil
// when the input is small.
func New(w io.Writer, total int64) *progressbar.ProgressBar {
	if total < minSize {
		return nil
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("checking"),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
}

// Reader adds what it reads to a progress bar.
type Reader struct {
	R   io.Reader
	Bar *progressbar.ProgressBar
}

func (c Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.Bar.Add(n)
	return n, err
}

// NewCount returns a bar over total steps of what (say "seeds"), for work
// that is counted rather than read.
func NewCount(w io.Writer, total int, what string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	)
}

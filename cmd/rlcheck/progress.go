package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressMin is the input size from which a progress bar is worth showing.
const progressMin = 8 << 20

// progressWanted reports whether to draw a progress bar on w: only on a
// terminal, never under CI, and never when the user said --no-progress.
func progressWanted(w io.Writer, disabled bool) bool {
	if disabled || os.Getenv("CI") != "" || os.Getenv("GITHUB_ACTIONS") == "true" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress returns a byte-counting bar over total bytes of input, or nil
// when the input is small.
func newProgress(w io.Writer, total int64) *progressbar.ProgressBar {
	if total < progressMin {
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

// countingReader adds what it reads to a progress bar.
type countingReader struct {
	r   io.Reader
	bar *progressbar.ProgressBar
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.bar.Add(n)
	return n, err
}

package logcheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rlcheck/rlcheck/sendlog"
)

// GitHubError writes err as a GitHub Actions ::error workflow command,
// placed on the file and line of a *sendlog.InputError (standard input has
// no file to point at).
func GitHubError(err error) string {
	var b strings.Builder
	b.WriteString("::error ")
	var in *sendlog.InputError
	title := "rlcheck: error"
	if errors.As(err, &in) {
		title = "rlcheck: bad input"
		if in.File != "" && !strings.HasPrefix(in.File, "<") {
			fmt.Fprintf(&b, "file=%s,", ghProperty(in.File))
			if in.Line > 0 {
				fmt.Fprintf(&b, "line=%d,", in.Line)
			}
		}
	}
	fmt.Fprintf(&b, "title=%s::%s\n", ghProperty(title), ghData("rlcheck: "+err.Error()))
	return b.String()
}

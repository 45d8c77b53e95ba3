package report

import (
	"fmt"
	"strings"
)

// GitHubError writes msg as a GitHub Actions ::error workflow command.
// Bad input is titled so, and placed on file and line when file is set
// (line 0: the file only).
func GitHubError(msg string, badInput bool, file string, line int64) string {
	var b strings.Builder
	b.WriteString("::error ")
	title := "rlcheck: error"
	if badInput {
		title = "rlcheck: bad input"
		if file != "" {
			fmt.Fprintf(&b, "file=%s,", ghProperty(file))
			if line > 0 {
				fmt.Fprintf(&b, "line=%d,", line)
			}
		}
	}
	fmt.Fprintf(&b, "title=%s::%s\n", ghProperty(title), ghData("rlcheck: "+msg))
	return b.String()
}

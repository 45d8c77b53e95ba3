package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsGoSnippetsHandleErrors: the Go shown in README.md and
// docs/go-api.md discards no error, and checks each one it assigns on the
// next line, as code copied from it should.
func TestDocsGoSnippetsHandleErrors(t *testing.T) {
	assigns := regexp.MustCompile(`^\s*(\w+, )?err :?= `)
	discards := regexp.MustCompile(`(^|[\s,])_\s*(,\s*\w+\s*)?:?= `)
	for _, page := range []string{"README.md", "docs/go-api.md"} {
		data, err := os.ReadFile("../../" + page)
		require.NoError(t, err)
		blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(data), -1)
		if page == "docs/go-api.md" {
			require.NotEmpty(t, blocks, page)
		}
		for _, b := range blocks {
			lines := strings.Split(b[1], "\n")
			for i, l := range lines {
				assert.False(t, discards.MatchString(l), "%s discards a value: %s", page, l)
				if assigns.MatchString(l) {
					end := i // the line the statement ends on
					if strings.HasSuffix(l, "{") {
						indent := l[:len(l)-len(strings.TrimLeft(l, "\t "))]
						for end++; end < len(lines) && !strings.HasPrefix(lines[end], indent+"}"); end++ {
						}
					}
					next := ""
					if end+1 < len(lines) {
						next = strings.TrimSpace(lines[end+1])
					}
					assert.True(t, strings.HasPrefix(next, "if err != nil"), "%s does not check the error of: %s", page, l)
				}
			}
		}
	}
}

package rlchecktest_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCIRecipeShownInTheDocs: docs/go-api.md shows Example_ci as the file
// holds it, which go test compiles and runs, so the recipe on the page
// cannot drift from code that works.
func TestCIRecipeShownInTheDocs(t *testing.T) {
	const file, name = "example_ci_test.go", "Example_ci"
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, 0)
	require.NoError(t, err)
	var code string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			code = string(src[fset.Position(fn.Pos()).Offset:fset.Position(fn.End()).Offset]) + "\n"
		}
	}
	require.NotEmpty(t, code, "%s in %s", name, file)
	doc, err := os.ReadFile("../docs/go-api.md")
	require.NoError(t, err)
	start := strings.Index(string(doc), "```go\nfunc "+name+"() {\n")
	require.GreaterOrEqual(t, start, 0, "docs/go-api.md shows no go block of %s", name)
	block := string(doc[start+len("```go\n"):])
	block = block[:strings.Index(block, "```\n")]
	assert.Equal(t, code, block, "docs/go-api.md's copy of %s differs from %s", name, file)
}

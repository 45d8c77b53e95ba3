package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// root is the module's directory.
const root = "../.."

// sourceFiles returns the module's non-test Go files, as slash paths from
// root, leaving out other modules (a go.mod of their own) and testdata.
func sourceFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || fileExists(filepath.Join(p, "go.mod"))) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// maxFuncLines is the longest a non-test function may be, from the line
// of its func keyword to that of its closing brace.
const maxFuncLines = 100

// TestNoFunctionOverAHundredLines walks every function of the module's
// code and names each that is longer than maxFuncLines.
func TestNoFunctionOverAHundredLines(t *testing.T) {
	fset := token.NewFileSet()
	for _, rel := range sourceFiles(t) {
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		if ast.IsGenerated(f) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := "a function literal"
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body = fn.Body
			}
			if body == nil {
				return true
			}
			lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines long, over %d", rel, fset.Position(n.Pos()).Line, name, lines, maxFuncLines)
			}
			return true
		})
	}
}

// cliPackages are where flag names belong: the command and its wiring,
// and the programs and test servers that run other commands.
var cliPackages = []string{"cmd/", "scripts/", "internal/redistest/", "internal/pgtest/"}

// reportWords are the places where a library writes a flag into output
// meant for the reader of the command's report, not into an error: each
// is the report's hint of how to see more.
var reportWords = map[string]string{
	"report/text.go":       "filters\\n|--keys 0 shows all",
	"sendlog/timestamp.go": "set --unit to override",
	"logcheck/limits.go":   "give them\\)",
	"sqlcheck/run.go":      "--max-window adds it",
}

// flagWord is a command-line flag in a string literal; "rlcheck check
// --format json" names how to make an input, not a setting of the library.
var flagWord = regexp.MustCompile(`(^|[^-\w])--([a-z]|%s)`)
var commandLine = regexp.MustCompile(`rlcheck [a-z]+ --[a-z]`)

// TestLibraryErrorsNameNoFlags: libraries name the settings an error
// concerns as Go code sets them (logcheck.Config.MaxBuffered); the command
// line words them as flags (cmd/rlcheck/internal/cli). A string literal of a library
// that names a --flag fails, unless it is one of reportWords.
func TestLibraryErrorsNameNoFlags(t *testing.T) {
	fset := token.NewFileSet()
	for _, rel := range sourceFiles(t) {
		if hasAnyPrefix(rel, cliPackages) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !flagWord.MatchString(s) || commandLine.MatchString(s) {
				return true
			}
			if ok, _ := regexp.MatchString(reportWords[rel], s); ok && reportWords[rel] != "" {
				return true
			}
			t.Errorf("%s:%d: a library string names a flag: %q", rel, fset.Position(lit.Pos()).Line, s)
			return true
		})
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

package plots

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// keep writes the smoke-test charts to a directory for a person to look at:
// go test ./plots -run Render -keep /tmp/plots
var keep = flag.String("keep", "", "write rendered charts to this directory")

func outDir(t *testing.T) string {
	t.Helper()
	if *keep == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(*keep, 0o755); err != nil {
		t.Fatal(err)
	}
	return *keep
}

// readFixture reads a send log of decimal seconds into integer nanoseconds
// without passing through a float.
func readFixture(t testing.TB, name string) []int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var times []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		whole, frac, _ := strings.Cut(line, ".")
		frac = (frac + "000000000")[:9]
		s, err1 := strconv.ParseInt(whole, 10, 64)
		ns, err2 := strconv.ParseInt(frac, 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", name, line)
		}
		times = append(times, s*1e9+ns)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return times
}

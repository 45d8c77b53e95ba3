package htmlreport_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/htmlreport"
	"github.com/rlcheck/rlcheck/logcheck"
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/rule"
)

// largeLog is the long send log of TestLargeLogInBrowser and the
// benchmarks: go test ./htmlreport -run TestLargeLogInBrowser -args -log FILE.
var largeLog = flag.String("log", "", "a long send log (go run ./scripts/genlog -lines 10000000)")

// checkLargeLog checks the log named by -log (the benchmark
// log: go run ./scripts/genlog -lines 10000000) with the benchmark's rules,
// as rlcheck check --html does when keep is set (else as the plain check),
// or skips without it.
func checkLargeLog(b testing.TB, keep bool) *report.Result {
	b.Helper()
	name := *largeLog
	if name == "" {
		b.Skip("give a long send log: -args -log FILE")
	}
	f, err := os.Open(name)
	require.NoError(b, err)
	defer f.Close()
	rules, err := rule.ParseList("10/1s,500/1m,600000/24h")
	require.NoError(b, err)
	list := 0
	if keep {
		list = htmlreport.CheckList(0, "r.html")
	}
	res, err := logcheck.Run([]logcheck.Input{{Name: name, R: f}}, logcheck.Config{
		Rules: rules, KeepTimes: keep, List: list,
		MaxDisorder: 5 * time.Second, MaxBuffered: logcheck.DefaultMaxBuffered,
	})
	require.NoError(b, err)
	return res
}

// BenchmarkCheckHTML is the whole of rlcheck check --html on the log:
// the check keeping what the report needs, then the report.
func BenchmarkCheckHTML(b *testing.B) {
	path := filepath.Join(b.TempDir(), "r.html")
	for b.Loop() {
		res := checkLargeLog(b, true)
		require.NoError(b, htmlreport.Check(path, res, 0, 20))
	}
}

// BenchmarkCheckPlain is the same check without the report, for the
// difference.
func BenchmarkCheckPlain(b *testing.B) {
	for b.Loop() {
		checkLargeLog(b, false)
	}
}

// BenchmarkReport is the report alone, from one check.
func BenchmarkReport(b *testing.B) {
	res := checkLargeLog(b, true)
	path := filepath.Join(b.TempDir(), "r.html")
	for b.Loop() {
		require.NoError(b, htmlreport.Check(path, res, htmlreport.Listed, 20))
	}
}

package redislimit

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// quiet drops go-redis' own log lines: the fault tests provoke many
// expected dial errors, and the errors that matter reach the tests anyway.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// TestMain runs up to 8 parallel tests at once unless -parallel says
// otherwise: most tests here wait on round trips to servers of their own,
// not on the CPU, which GOMAXPROCS (go test's default) would measure.
func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
	os.Exit(m.Run())
}

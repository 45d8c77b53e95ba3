package redislimit

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/rlcheck/rlcheck/internal/testrun"
)

// quiet drops go-redis' own log lines: the fault tests provoke many
// expected dial errors, and the errors that matter reach the tests anyway.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// TestMain runs up to 8 parallel tests at once: most tests here wait on
// round trips to servers of their own, not on the CPU.
func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	testrun.Main(m, 8)
}

package redislimit

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// quiet drops go-redis' own log lines: the fault tests provoke many
// expected dial errors, and the errors that matter reach the tests anyway.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

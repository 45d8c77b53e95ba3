package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/rlcheck/rlcheck/adapter"
)

// Exec starts the adapter program of --exec (nil when command is empty),
// its standard error passed to errOut.
func Exec(command string, timeout time.Duration, errOut io.Writer) (*adapter.Program, error) {
	if command == "" {
		return nil, nil
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("--exec-timeout %v: want a positive duration", timeout)
	}
	return adapter.Open(adapter.Config{Command: command, Timeout: timeout, Stderr: errOut})
}

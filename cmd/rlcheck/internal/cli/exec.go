package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/adapter"
	"github.com/rlcheck/rlcheck/workload"
)

// Exec starts the adapter program of --exec (nil when command is empty),
// its standard error passed to errOut, and checks that --strategy (strategy)
// is among the strategies run or those the program offers.
func Exec(command string, timeout time.Duration, errOut io.Writer, strategy string, run []string) (*adapter.Program, error) {
	if command == "" {
		return nil, nil
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("--exec-timeout %v: want a positive duration", timeout)
	}
	p, err := adapter.Open(adapter.Config{Command: command, Timeout: timeout, Stderr: errOut})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(run, strategy) && !slices.Contains(p.Strategies(), strategy) {
		p.Close()
		return nil, fmt.Errorf("--strategy %q is not among the strategies run (%s) nor those --exec offers (%s)",
			strategy, strings.Join(run, ", "), strings.Join(p.Strategies(), ", "))
	}
	return p, nil
}

// PickStrategy is s.Pick(name) for --strategy, leaving a name it does not
// know to Exec when --exec is given (withExec).
func PickStrategy(s *workload.Scenario, name string, withExec bool) (string, error) {
	picked, err := s.Pick(name)
	if err != nil && withExec && name != "" {
		return name, nil
	}
	return picked, err
}

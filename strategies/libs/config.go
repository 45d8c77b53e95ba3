package libs

import (
	"fmt"
	"time"
)

// Config is how a library limiter is set up for each rule "N per W".
// The zero value is the setting users usually write for x/time/rate (burst
// N, rate N/W); go.uber.org/ratelimit users usually keep its default slack,
// which Default includes.
type Config struct {
	// Burst is each x/time/rate limiter's bucket size; 0 means the rule's
	// limit N.
	Burst int
	// Slack is go.uber.org/ratelimit's WithSlack: how many unused
	// permissions an idle limiter banks (the library's default is 10).
	Slack int
	// Margin lengthens each window before it becomes a rate: N per W+Margin.
	Margin time.Duration
}

// UberDefaultSlack is go.uber.org/ratelimit's slack when none is given.
const UberDefaultSlack = 10

// Default is the configuration users write when they do not tune anything.
func Default() Config { return Config{Slack: UberDefaultSlack} }

// Validate reports a setting the libraries cannot take.
func (c Config) Validate() error {
	switch {
	case c.Burst < 0:
		return fmt.Errorf("libs: burst must not be negative")
	case c.Slack < 0:
		return fmt.Errorf("libs: slack must not be negative")
	case c.Margin < 0:
		return fmt.Errorf("libs: margin must not be negative")
	}
	return nil
}

// burst returns the bucket size for a rule of limit n.
func (c Config) burst(n int) int {
	if c.Burst > 0 {
		return c.Burst
	}
	return n
}

package logcheck

import (
	"errors"
	"fmt"
)

// ErrNeedsEnd is returned by InFlightCap for a cap asked for explicitly on
// a log without end times.
var ErrNeedsEnd = errors.New("logcheck.Config.MaxInFlight needs when each call ended: sendlog.Options.EndCol/sendlog.Options.EndField or sendlog.Options.DurationCol/sendlog.Options.DurationField")

// InFlightCap decides which in-flight cap a check enforces (0: none). A cap
// given explicitly (explicit: on the command line; 0 there disables the
// contract's) wins over the contract's. A contract serves logs with and
// without end times alike, so its cap on a log without them is not an
// error: notChecked says so, for report.Result.NotChecked. An explicit cap on such
// a log is ErrNeedsEnd.
func InFlightCap(contractCap, flagCap int, explicit, hasEnd bool) (limit int, notChecked string, err error) {
	if explicit {
		if flagCap > 0 && !hasEnd {
			return 0, "", ErrNeedsEnd
		}
		return flagCap, "", nil
	}
	if contractCap > 0 && !hasEnd {
		return 0, fmt.Sprintf("the contract's in-flight cap (at most %d at once): the log has no end times (--end-col/--end-field or --duration-col/--duration-field give them)", contractCap), nil
	}
	return contractCap, "", nil
}

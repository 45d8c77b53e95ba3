package logcheck

import (
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/sendlog"
)

// A log of reserved sends (sendlog.Options.SettledCol or SettledField)
// gives each send's estimates, its actual costs and the instant they
// became known; the checker charges the estimates from the send and the
// actual costs from the settlement on (checker.ObserveReserved). They ride
// in the cost table after the estimates. A refused send (429) counted under
// rule.RefusedCount takes its estimates and is never settled.

// reservedCols are a run's actual costs, by unit, and settlement instants.
type reservedCols struct {
	actual  [][]int64
	settled []int64
}

// cut returns sends i to j of the run.
func (rv *reservedCols) cut(i, j int) *reservedCols {
	return &reservedCols{actual: colsOf(rv.actual, i, j), settled: rv.settled[i:j]}
}

// observeReserved hands a run of reserved sends to chk one by one.
func observeReserved(chk *checker.Checker, ats, refs []int64, cols [][]int64, rv *reservedCols) error {
	est := make([]int64, len(cols))
	settle := &checker.Settlement{Actual: make([]int64, len(cols))}
	for i, at := range ats {
		for u, col := range cols {
			est[u], settle.Actual[u] = col[i], rv.actual[u][i]
		}
		settle.At = rv.settled[i]
		s := settle
		if s.At == sendlog.NotSettled {
			s = nil
		}
		if err := chk.ObserveReserved(at, refs[i], est, s); err != nil {
			return err
		}
	}
	return nil
}

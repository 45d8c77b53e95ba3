package logcheck

import (
	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
)

// A log that gives each call's HTTP status (sendlog.Options.StatusCol or
// StatusField) is judged by its status: a 2xx call is judged; a 429 call,
// refused by the provider, is not judged, and counts toward later windows
// only under rule.RefusedCount (checker.ObserveRefused); a call of any
// other status is left out, as infer leaves it out. The status rides in
// the cost table as one more column, after the units.

// statusClass sorts a status into what the check does with the call.
type statusClass int

const (
	accepted statusClass = iota
	refused
	leftOut
)

func classOf(status int64, reading rule.Refusals) statusClass {
	switch {
	case status >= 200 && status < 300:
		return accepted
	case status == 429 && reading == rule.RefusedCount:
		return refused
	}
	return leftOut
}

// statusTally counts a log's calls by what their status made of them.
type statusTally struct {
	refused, leftOut int64
	explained        int64 // refused calls some rule would have refused too
}

// observeStatuses hands a run of one group's sends to chk by status:
// runs of accepted sends as one batch, each refused send on its own.
func (t *groupTable) observeStatuses(chk *checker.Checker, ats, refs []int64, cols [][]int64, status []int64, rv *reservedCols) error {
	reading := t.cfg.Refusals
	one := make([]int64, len(cols))
	var err error
	keep := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	for i := 0; i < len(ats); {
		switch classOf(status[i], reading) {
		case leftOut:
			if status[i] == 429 {
				t.statuses.refused++
			} else {
				t.statuses.leftOut++
			}
			i++
			continue
		case refused:
			t.statuses.refused++
			for u, col := range cols {
				one[u] = col[i]
			}
			keep(chk.ObserveRefused(ats[i], refs[i], one))
			i++
			continue
		}
		j := i + 1
		for j < len(ats) && classOf(status[j], reading) == accepted {
			j++
		}
		if rv != nil {
			keep(observeReserved(chk, ats[i:j], refs[i:j], colsOf(cols, i, j), rv.cut(i, j)))
		} else {
			keep(observeRun(chk, ats[i:j], refs[i:j], colsOf(cols, i, j)))
		}
		i = j
	}
	return err
}

// observeRun hands accepted sends, with their costs when the rules meter
// any, to chk.
func observeRun(chk *checker.Checker, ats, refs []int64, cols [][]int64) error {
	if cols != nil {
		return chk.ObserveCostBatch(ats, refs, cols)
	}
	return chk.ObserveBatch(ats, refs)
}

// colsOf cuts sends i to j from each cost column.
func colsOf(cols [][]int64, i, j int) [][]int64 {
	if cols == nil {
		return nil
	}
	out := make([][]int64, len(cols))
	for u, col := range cols {
		out[u] = col[i:j]
	}
	return out
}

// counted returns the sends of a run that fill windows, with their costs:
// all of them without a status, else those observeStatuses hands on.
func (t *groupTable) counted(ats []int64, cols [][]int64, status []int64) ([]int64, [][]int64) {
	if status == nil {
		return ats, cols
	}
	var outAt []int64
	outCols := make([][]int64, len(cols))
	for i, at := range ats {
		if classOf(status[i], t.cfg.Refusals) == leftOut {
			continue
		}
		outAt = append(outAt, at)
		for u, col := range cols {
			outCols[u] = append(outCols[u], col[i])
		}
	}
	if cols == nil {
		outCols = nil
	}
	return outAt, outCols
}
